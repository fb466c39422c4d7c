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

const readOnly = (): never => {
  throw new TypeError('this table is read-only');
};

/** A Map whose set, delete and clear throw: Object.freeze leaves a Map's entries writable. */
export function frozenMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  const map = new Map(entries);
  for (const name of ['set', 'delete', 'clear']) Object.defineProperty(map, name, { value: readOnly });
  return Object.freeze(map);
}

/** A Set whose add, delete and clear throw. */
export function frozenSet<T>(values: Iterable<T>): ReadonlySet<T> {
  const set = new Set(values);
  for (const name of ['add', 'delete', 'clear']) Object.defineProperty(set, name, { value: readOnly });
  return Object.freeze(set);
}
