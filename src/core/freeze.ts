/**
 * Deep freeze for the exported tables (the parameters, the error codes): a caller that writes
 * into one (`PARAMS[0].max = 1e5`) would change every later render's validation in the process.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
