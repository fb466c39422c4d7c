/**
 * Defines `key` on `obj` as an enumerable property computed on first read and then stored as a
 * plain data property: JSON, spreads, deep equality and structured clones see an ordinary value.
 * An existing key keeps its place in the object's key order.
 */
export function lazyProperty<T extends object, K extends keyof T>(obj: T, key: K, compute: () => T[K]): void {
  Object.defineProperty(obj, key, {
    enumerable: true,
    configurable: true,
    get(): T[K] {
      const value = compute();
      Object.defineProperty(obj, key, { value, enumerable: true, configurable: true, writable: true });
      return value;
    },
  });
}

/** Whether `obj[key]` is a lazyProperty() not read yet. */
export function isPending(obj: object, key: PropertyKey): boolean {
  return typeof Object.getOwnPropertyDescriptor(obj, key)?.get === 'function';
}
