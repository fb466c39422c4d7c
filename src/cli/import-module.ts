/**
 * How the CLI imports the ES modules it does not bundle (sharp's entry, the server's modules for
 * `serve` and `mcp`). Relative specifiers are relative to src/cli (dist/cli), where every caller
 * and this module live. The built CLI runs as a `vm.Script` (see code-cache.ts), whose own
 * `import()` Node 20 allows only behind a flag or with an experimental-feature warning, so its
 * launcher (main.ts, built as dist/cli/main.cjs beside it) passes its own `import()` here instead.
 */
type Importer = (specifier: string) => Promise<unknown>;

let importer: Importer = (specifier) => import(specifier);

/** import(specifier), through the launcher's importer when it gave one. */
export function importModule<T>(specifier: string): Promise<T> {
  return importer(specifier) as Promise<T>;
}

export function setModuleImporter(fn: Importer): void {
  importer = fn;
}
