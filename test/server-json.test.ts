/**
 * server.json (the MCP registry entry) agrees with the package: name = package.json mcpName, the
 * same version, the npm identifier, the stdio command `v2a mcp` and flags the command really has.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Command } from 'commander';
import { registerMcp } from '../src/cli/mcp-command.js';
import { MCP_ROOT_HELP, MCP_STDIO_ENV } from '../src/contract/mcp-stdio.js';
import { FORMATS_IN_WORDS } from '../src/core/params/definitions.js';
import { FETCH_TIMEOUT_MS, MAX_DECODED_BYTES, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, MCP_MAX_CHARS } from '../src/settings/index.js';

const read = (name: string) => JSON.parse(readFileSync(new URL(`../${name}`, import.meta.url), 'utf8'));

test('server.json matches package.json and the v2a mcp command', () => {
  const server = read('server.json');
  const pkg = read('package.json');
  assert.match(server.$schema, /^https:\/\/static\.modelcontextprotocol\.io\/schemas\/\d{4}-\d{2}-\d{2}\/server\.schema\.json$/);
  assert.equal(server.name, pkg.mcpName);
  assert.match(server.name, /^[a-z0-9.-]+\/[a-z0-9._-]+$/, 'one slash, reverse-DNS namespace');
  assert.ok(server.description.length <= 100, 'the registry caps descriptions at 100 characters');
  assert.equal(server.version, pkg.version);
  assert.ok(pkg.description.includes(`(${FORMATS_IN_WORDS})`), 'package.json names every output format');
  const [npm] = server.packages;
  assert.deepEqual([npm.registryType, npm.identifier, npm.version, npm.transport.type], ['npm', pkg.name, pkg.version, 'stdio']);
  assert.deepEqual(npm.packageArguments[0], { type: 'positional', value: 'mcp', description: 'Serve the render_ascii tool over stdio.' });
  const program = new Command();
  registerMcp(program);
  const mcp = program.commands.find((c) => c.name() === 'mcp')!;
  const flags = mcp.options.map((o) => o.long);
  for (const arg of npm.packageArguments.filter((a: { type: string }) => a.type === 'named')) assert.ok(flags.includes(arg.name), arg.name);
  // The roots rule as v2a mcp --help states it (a JSON file cannot import it).
  const root = npm.packageArguments.find((a: { name?: string }) => a.name === '--root');
  assert.equal(root.description, `${MCP_ROOT_HELP[0]!.toUpperCase()}${MCP_ROOT_HELP.slice(1)}.`);
  // Every variable v2a mcp reads, as its help names them; the README's list below the settings
  // table adds the three beyond the CLI's image limits.
  const env = [...MCP_STDIO_ENV];
  assert.deepEqual(npm.environmentVariables.map((v: { name: string }) => v.name), env);
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  assert.ok(readme.includes(`\`v2a mcp\` also reads ${env.slice(3).map((n) => `\`${n}\``).join(', ').replace(/, ([^,]+)$/, ' and $1')},`), 'README names what v2a mcp reads');
  // A default a description states is the setting's own (a JSON file cannot import it).
  const settings = new Map([MCP_MAX_CHARS, FETCH_TIMEOUT_MS, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, MAX_DECODED_BYTES].map((s) => [s.name, s.default]));
  const stated = [...npm.environmentVariables, ...npm.packageArguments.filter((a: { name?: string }) => a.name === '--max-chars').map((a: object) => ({ ...a, name: 'V2A_MCP_MAX_CHARS' }))]
    .flatMap((v: { name: string; description: string }) => [...v.description.matchAll(/Default (\d+)\./g)].map((m) => [v.name, Number(m[1])] as const));
  assert.ok(stated.length >= 3, 'server.json states the defaults of --max-chars, V2A_MCP_MAX_CHARS and V2A_FETCH_TIMEOUT_MS');
  for (const [name, value] of stated) assert.equal(value, settings.get(name), `${name}'s default in server.json`);
});
