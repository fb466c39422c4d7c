/**
 * `v2a mcp [--root DIR]... [--max-chars N]`: the MCP server over stdio, for agents that start
 * their servers as a command (`"command": "npx", "args": ["v2a", "mcp"]`). The tool is the
 * `render_ascii` of /api/mcp, plus `imagePath` confined to the roots. Only the stdio face loads:
 * no HTTP server, no telemetry (src/server/mcp/stdio.ts is imported when the command runs).
 */
import { MCP_ROOT_HELP, MCP_STDIO_ENV } from '../contract/mcp-stdio.js';
import type { Command } from 'commander';
import { importModule } from './import-module.js';
import { MCP_MAX_CHARS, readInteger } from '../settings/index.js';
import { integerFlag, once, readLimits, usageError } from './terminal.js';

interface McpOpts {
  root?: string[];
  maxChars?: string;
}

/** --max-chars, else V2A_MCP_MAX_CHARS (the server's setting, read by its parser), else its default. */
function maxCharsOf(flag: string | undefined): number {
  if (flag !== undefined) return integerFlag('--max-chars', flag, MCP_MAX_CHARS.min, MCP_MAX_CHARS.max, `a whole number of characters from ${MCP_MAX_CHARS.min} to ${MCP_MAX_CHARS.max}, 0 for no budget`);
  try {
    return readInteger(MCP_MAX_CHARS, process.env);
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

async function mcpAction(cmd: Command): Promise<void> {
  const opts = cmd.opts<McpOpts>();
  const limits = readLimits();
  const maxChars = maxCharsOf(opts.maxChars);
  const [{ serveStdio }, { Roots, realFolder }, { ConfigError, loadFetchSettings, strayVariables }] = await Promise.all([
    importModule<typeof import('../server/mcp/stdio.js')>('../server/mcp/stdio.js'),
    importModule<typeof import('../server/mcp/roots.js')>('../server/mcp/roots.js'),
    importModule<typeof import('../server/config.js')>('../server/config.js'),
  ]);
  // Checked as the server starts, not at the first imageUrl call: the agent's host shows why it stopped.
  let fetch;
  try {
    fetch = loadFetchSettings(process.env);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(...(err.problems as [string, ...string[]]));
    throw err;
  }
  for (const stray of strayVariables(process.env)) process.stderr.write(`v2a mcp: ${stray}\n`);
  // Without --root, the working directory until the client lists roots (roots.ts).
  const implicit = !(opts.root && opts.root.length);
  const dirs = implicit ? [process.cwd()] : opts.root!;
  const real: Awaited<ReturnType<typeof realFolder>>[] = [];
  for (const dir of dirs) {
    try {
      real.push(await realFolder(dir));
    } catch (err) {
      throw usageError(`--root: ${(err as Error).message}`);
    }
  }
  await serveStdio({ roots: new Roots(real, implicit), maxChars, limits, fetch });
}

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('Serve the render_ascii MCP tool over stdio (for Claude Desktop, Claude Code, Cursor, VS Code); imagePath reads local files inside the roots.')
    .option('--root <dir>', MCP_ROOT_HELP, (v: string, prev: string[] = []) => [...prev, v])
    .option('--max-chars <n>', `character budget of one reply, the art (counted once) plus its summary; 0 = none (default: V2A_MCP_MAX_CHARS, else ${MCP_MAX_CHARS.default})`, once('--max-chars'))
    .addHelpText('after', `
The server speaks MCP (JSON-RPC, one message per line) on standard input and output until its input ends. Every result carries the art as text, a PNG image block and a structured summary. imagePath must name a regular file inside a root, reached through symlinks that stay inside the roots. Without --root, the root is the working directory until the client lists roots of its own.

Environment (what each means: v2a serve --settings; a bad value stops the server at once):
  ${MCP_STDIO_ENV.slice(0, 3).join(', ')},
  ${MCP_STDIO_ENV.slice(3).join(', ')}
imageUrl is off until V2A_IMAGE_FETCH_ALLOWLIST names hosts.

Examples (client configuration):
  { "mcpServers": { "v2a": { "command": "npx", "args": ["-y", "v2a", "mcp"] } } }
  claude mcp add v2a -- npx -y v2a mcp --root ~/Pictures
`)
    .action((_opts: unknown, command: Command) => mcpAction(command));
}
