/**
 * The `v2a` command line, loaded by main.ts. Kept minimal: commander and the command declarations
 * load at start-up; sharp and the renderer load only inside the command that needs them.
 */
import { registerCompletion } from './completion-command.js';
import { registerDecode } from './decode-command.js';
import { registerMcp } from './mcp-command.js';
import { registerPlay } from './play-command.js';
import { run, type CommandRegistrar } from './program.js';
import { registerRender } from './render-command.js';
import { registerServe } from './serve-command.js';
import { exitQuietlyOnEpipe } from './terminal.js';

const COMMANDS: readonly CommandRegistrar[] = [registerRender, registerPlay, registerDecode, registerServe, registerMcp, registerCompletion];

exitQuietlyOnEpipe();
const code = await run(process.argv, COMMANDS);
// Exit now rather than wait for libvips' thread pool to wind down; output has been flushed
// (every write is awaited) and stderr is synchronous.
process.exit(code);
