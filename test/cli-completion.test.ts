/**
 * `v2a completion bash|zsh|fish`: generated from the same flag definitions as the commands; the
 * bash script is exercised in bash, zsh and fish scripts are syntax-checked when those shells
 * are installed (and said to be skipped otherwise).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PARAMS, kebabName, type ParamDef } from '../src/core/params/definitions.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'src/cli/main.ts');
const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

const scripts: Record<string, string> = {};
let dir = '';

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'v2a-completion-'));
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'completion', shell], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    scripts[shell] = r.stdout;
    writeFileSync(join(dir, `v2a.${shell}`), r.stdout);
  }
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The completions bash offers for the words typed so far (the last one being completed). */
function complete(words: readonly string[]): string[] {
  const arr = words.map((w) => `'${w}'`).join(' ');
  const r = spawnSync('bash', ['-c', `source ${join(dir, 'v2a.bash')}; COMP_WORDS=(${arr}); COMP_CWORD=${words.length - 1}; _v2a; printf '%s\\n' "\${COMPREPLY[@]}"`], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean).sort();
}

describe('v2a completion', () => {
  test('every script names every render parameter flag, the view flags and the commands', () => {
    for (const [shell, text] of Object.entries(scripts)) {
      for (const def of PARAMS as readonly ParamDef[]) {
        const flag = def.cliFlag ? 'colors' : kebabName(def.name);
        assert.ok(text.includes(flag), `${shell}: ${flag}`);
      }
      for (const word of ['width', 'height', 'size', 'play', 'decode', 'serve', 'completion', 'loop']) assert.ok(text.includes(word), `${shell}: ${word}`);
    }
  });

  test('bash: commands, flags and enum values complete', () => {
    assert.deepEqual(complete(['v2a', 'pl']), ['play']);
    assert.deepEqual(complete(['v2a', '--char']), ['--charset']);
    assert.deepEqual(complete(['v2a', 'x.png', '--charset', 'd']), ['detailed', 'dots']);
    assert.deepEqual(complete(['v2a', 'render', '--colors', '']), ['16', '256', 'none', 'truecolor']);
    assert.deepEqual(complete(['v2a', 'play', 'clip.mp4', '--lo']), ['--loop']);
    assert.deepEqual(complete(['v2a', 'completion', 'z']), ['zsh']);
    assert.deepEqual(complete(['v2a', 'serve', '--po']), ['--port']);
    writeFileSync(join(dir, 'photo.jpg'), '');
    assert.ok(complete(['v2a', 'pho']).includes('photo.jpg'), 'file names for the default command');
  });

  test('an unknown shell is a usage error', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'completion', 'tcsh'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.equal(r.stderr, 'v2a: completion: the shell must be one of bash, zsh, fish (got "tcsh")\n');
  });

  test('fish: flags and values complete', { skip: has('fish') ? false : 'fish is not installed' }, () => {
    const ask = (line: string) => spawnSync('fish', ['-c', `source ${join(dir, 'v2a.fish')}; complete -C ${JSON.stringify(line)}`], { encoding: 'utf8' }).stdout
      .split('\n').filter(Boolean).map((l) => l.split('\t')[0]).sort();
    assert.deepEqual(ask('v2a --char'), ['--charset']);
    assert.deepEqual(ask('v2a x.png --charset d'), ['detailed', 'dots']);
    assert.deepEqual(ask('v2a play x.mp4 --lo'), ['--loop']);
    assert.ok(ask('v2a pl').includes('play'));
  });

  for (const shell of ['zsh', 'fish']) {
    test(`${shell}: the script parses`, { skip: has(shell) ? false : `${shell} is not installed` }, () => {
      const r = spawnSync(shell, ['-n', join(dir, `v2a.${shell}`)], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    });
  }
});
