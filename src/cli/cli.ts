/**
 * The `v2a` command line, started by main.ts. Kept minimal: commander and the command declarations
 * load at start-up; sharp and the renderer load only inside the command that needs them. No side
 * effect on import: the built CLI compiles this module (bundled as cli.cjs) before it runs it.
 */
import { registerCompletion } from './completion-command.js';
import { registerDecode } from './decode-command.js';
import { setModuleImporter } from './import-module.js';
import { registerMcp } from './mcp-command.js';
import { registerPlay } from './play-command.js';
import { run, type CommandRegistrar } from './program.js';
import { registerRender } from './render-command.js';
import { registerServe } from './serve-command.js';
import { exitQuietlyOnEpipe } from './terminal.js';

export const COMMANDS: readonly CommandRegistrar[] = [registerRender, registerPlay, registerDecode, registerServe, registerMcp, registerCompletion];

/**
 * Runs the command line `argv` (as process.argv) and resolves to the exit code. `importer`: how to
 * import the modules the CLI does not bundle (see import-module.ts), when not by this module's own
 * import().
 */
export async function main(argv: readonly string[], importer?: (specifier: string) => Promise<unknown>): Promise<number> {
  if (importer) setModuleImporter(importer);
  exitQuietlyOnEpipe();
  return run(argv, COMMANDS);
}
