/**
 * `v2a completion bash|zsh|fish`: generated from the same flag definitions as the commands; the
 * bash script is exercised in bash, zsh and fish scripts are syntax-checked when those shells
 * are installed (and said to be skipped otherwise).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PARAMS, kebabName, type ParamDef } from '../src/core/params/definitions.js';
import { V2A_BIN, ensureCliBuilt } from './helpers/cli-run.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

const scripts: Record<string, string> = {};
let dir = '';

before(async () => {
  await ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'v2a-completion-'));
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = spawnSync(process.execPath, [V2A_BIN, 'completion', shell], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    scripts[shell] = r.stdout;
    writeFileSync(join(dir, `v2a.${shell}`), r.stdout);
  }
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * The completions bash offers for the words typed so far (the last one being completed), as bash
 * splits them (COMP_WORDS: `--charset=d` is `--charset`, `=`, `d` with the default COMP_WORDBREAKS),
 * run in `cwd` (the scripts' directory by default).
 */
function complete(words: readonly string[], cwd = dir): string[] {
  // The words as arguments, so that any name passes unquoted.
  const r = spawnSync('bash', ['-c', `source ${join(dir, 'v2a.bash')}; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _v2a; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', ...words], { cwd, encoding: 'utf8' });
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

  test('bash: a file name with spaces or glob characters is one completion, for each file operand and -o', () => {
    const files = mkdtempSync(join(tmpdir(), 'v2a-files-'));
    try {
      for (const name of ['my photo.png', 'my\tclip.mp4', 'my[1].json', 'my*.png']) writeFileSync(join(files, name), '');
      const all = ['my\tclip.mp4', 'my photo.png', 'my*.png', 'my[1].json'];
      for (const words of [['v2a', 'my'], ['v2a', 'render', 'my'], ['v2a', 'x.png', '-o', 'my'], ['v2a', 'play', 'my'], ['v2a', 'play', 'x.mp4', '--output', 'my'], ['v2a', 'decode', 'my'], ['v2a', 'decode', 'a.json', '-o', 'my']]) {
        assert.deepEqual(complete(words, files), all, words.join(' '));
      }
      assert.deepEqual(complete(['v2a', 'my p'], files), ['my photo.png']);
    } finally {
      rmSync(files, { recursive: true, force: true });
    }
  });

  test('bash: mcp --root offers folders, not files', () => {
    const files = mkdtempSync(join(tmpdir(), 'v2a-files-'));
    try {
      mkdirSync(join(files, 'pics one'));
      writeFileSync(join(files, 'pic.png'), '');
      assert.deepEqual(complete(['v2a', 'mcp', '--root', 'pi'], files), ['pics one']);
      assert.deepEqual(complete(['v2a', 'mcp', '--root', '=', 'pi'], files), ['pics one']);
    } finally {
      rmSync(files, { recursive: true, force: true });
    }
  });

  test('bash: option values complete after --flag= too, as bash splits it or as one word', () => {
    assert.deepEqual(complete(['v2a', 'x.png', '--charset', '=']), ['binary', 'blocks', 'detailed', 'dots', 'minimal', 'standard']);
    assert.deepEqual(complete(['v2a', 'x.png', '--charset', '=', 'd']), ['detailed', 'dots']);
    assert.deepEqual(complete(['v2a', 'play', 'x.mp4', '--colors', '=', '2']), ['256']);
    assert.deepEqual(complete(['v2a', '--charset=d']), ['--charset=detailed', '--charset=dots']);
    assert.deepEqual(complete(['v2a', '--format=json']), ['--format=json', '--format=json-compact']);
    // A switch takes no value: nothing, not file names.
    assert.deepEqual(complete(['v2a', 'x.png', '--color', '=', '']), []);
  });

  test('bash: -V, --version and the help command are offered', () => {
    assert.deepEqual(complete(['v2a', '-V']), ['-V']);
    assert.deepEqual(complete(['v2a', '--vers']), ['--version']);
    assert.deepEqual(complete(['v2a', 'x.png', '--vers']), []);
    assert.deepEqual(complete(['v2a', 'hel']), ['help']);
    assert.deepEqual(complete(['v2a', 'help', 'pl']), ['play']);
  });

  test('zsh: descriptions keep their colons and brackets, escaped', () => {
    assert.ok(scripts.zsh!.includes('[write to <file> instead of standard output (-\\: standard output)]'), 'the -o description, whole');
    assert.ok(scripts.zsh!.includes("'--charset=[Glyph ramp]:value:(standard detailed blocks binary dots minimal)'"), '--charset=value');
    assert.ok(scripts.zsh!.includes("'--root=[a folder imagePath may read from (repeatable)]:folder:_files -/'"), 'mcp --root: folders');
  });

  test('an unknown shell is a usage error', () => {
    const r = spawnSync(process.execPath, [V2A_BIN, 'completion', 'tcsh'], { cwd: ROOT, encoding: 'utf8' });
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
    assert.ok(ask('v2a -').includes('--version'));
    assert.ok(ask('v2a h').includes('help'));
    assert.deepEqual(ask('v2a --charset=d'), ['--charset=detailed', '--charset=dots']);
  });

  for (const shell of ['zsh', 'fish']) {
    test(`${shell}: the script parses`, { skip: has(shell) ? false : `${shell} is not installed` }, () => {
      const r = spawnSync(shell, ['-n', join(dir, `v2a.${shell}`)], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    });
  }
});
