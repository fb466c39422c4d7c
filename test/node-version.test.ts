/**
 * The Node.js version gate (src/settings/node-version.cts): both entries, the `v2a` bin and
 * `npm start`, say which Node v2a needs instead of failing later with an internal error, and the
 * oldest they accept is package.json's engines.node.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import nodeVersion from '../src/settings/node-version.cjs';
import { V2A_BIN, ensureCliBuilt } from './helpers/cli-run.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { NODE_MIN, nodeTooOld } = nodeVersion;

test('the oldest Node accepted is package.json engines.node', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.equal(pkg.engines.node, `>=${NODE_MIN.major}.${NODE_MIN.minor}`);
  for (const ok of ['20.19.0', '20.20.2', '21.0.0', '22.1.0', '24.11.1', '100.0.0']) assert.equal(nodeTooOld(ok), undefined, ok);
  for (const old of ['20.18.3', '20.0.0', '18.20.8', '16.20.2', '19.99.0']) {
    assert.equal(nodeTooOld(old), `needs Node.js 20.19 or newer; this is Node.js ${old}`, old);
  }
});

test('on an older Node, both entries stop with that one line and exit 1', async () => {
  await ensureCliBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'v2a-node-'));
  try {
    // Node 18 as far as v2a can tell: process.versions.node is all the entries read.
    const preload = join(dir, 'node18.cjs');
    writeFileSync(preload, "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.20.8' } });\n");
    for (const entry of [V2A_BIN, join(ROOT, 'dist/server/main.cjs')]) {
      const r = spawnSync(process.execPath, ['--require', preload, entry, '--version'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.status, 1, entry);
      assert.equal(r.stderr, 'v2a: needs Node.js 20.19 or newer; this is Node.js 18.20.8\n', entry);
      assert.equal(r.stdout, '', entry);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
