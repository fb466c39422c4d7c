#!/usr/bin/env node
/**
 * `npm test`: the type checks (the project, the core alone, the studio) beside the test runner,
 * which runs each file of test/ in a process of its own, two at a time. The type checks keep one
 * core busy for about 15 s; the test files leave some of the machine's CPU idle (a tenth of two
 * cores, measured from /proc/stat: they wait on terminals, timers and frame rates), so one after
 * the other the checks added their whole time.
 * Their output is held and printed after the runner's. Exit status 1 when either fails.
 * `npm test -- test/a.test.ts ...` runs those files only (the checks still run).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';

const files = process.argv.slice(2);
// In name order, but the WebAssembly kernel tests first: last by name, the longer of them (11 s)
// ran alone at the end, one core idle, after the browser tests (measured: the run ended at 289 s,
// the file before it at 278 s).
const early = (f) => (f.startsWith('wasm-kernels') ? 0 : 1);
const tests = files.length > 0 ? files : readdirSync('test').filter((f) => f.endsWith('.test.ts')).sort((a, b) => early(a) - early(b) || (a < b ? -1 : a > b ? 1 : 0)).map((f) => `test/${f}`);

/** Runs `cmd`; resolves with its exit code (1 when it could not start or was killed). */
function run(cmd, args, output) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: output === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    if (output !== 'inherit') {
      child.stdout.on('data', (c) => output.push(c));
      child.stderr.on('data', (c) => output.push(c));
    }
    child.on('error', (err) => {
      if (output !== 'inherit') output.push(Buffer.from(`${cmd}: ${err.message}\n`));
      resolve(1);
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const held = [];
const checks = (async () => {
  for (const script of ['typecheck', 'typecheck:studio']) {
    // npm's own script when npm runs this (as build-if-stale.mjs runs it), else npm from PATH.
    const npm = process.env.npm_execpath;
    const code = await (npm ? run(process.execPath, [npm, 'run', '--silent', script], held) : run('npm', ['run', '--silent', script], held));
    if (code !== 0) return code;
  }
  return 0;
})();
const runner = run(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...tests], 'inherit');
const [checked, tested] = await Promise.all([checks, runner]);
process.stdout.write(Buffer.concat(held));
console.log(checked === 0 ? '# type checks: clean' : '# type checks: FAILED (above)');
process.exitCode = checked !== 0 || tested !== 0 ? 1 : 0;
