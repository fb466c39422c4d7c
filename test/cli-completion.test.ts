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

/** Separates the cases' words among bash's arguments (no word contains it). */
const SEP = '\u001f';

/**
 * The completions bash offers for each case, the words typed so far (the last one being
 * completed), as bash splits them (COMP_WORDS: `--charset=d` is `--charset`, `=`, `d` with the
 * default COMP_WORDBREAKS), run in `cwd` (the scripts' directory by default). One bash for all the
 * cases: a process start is what costs, many times over beside the studio's browsers.
 */
function completions(cases: readonly (readonly string[])[], cwd = dir): string[][] {
  // The words as arguments, so that any name passes unquoted; each case's reply ends in a SEP line.
  const script = `source ${join(dir, 'v2a.bash')}
run() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _v2a; printf '%s\\n' "\${COMPREPLY[@]}"; printf '%s\\n' "$SEP"; }
SEP=$1; shift; words=()
for a in "$@"; do if [[ $a == "$SEP" ]]; then run "\${words[@]}"; words=(); else words+=("$a"); fi; done`;
  const args = cases.flatMap((words) => [...words, SEP]);
  const r = spawnSync('bash', ['-c', script, 'bash', SEP, ...args], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const replies = r.stdout.split(`${SEP}\n`).slice(0, -1).map((reply) => reply.split('\n').filter(Boolean).sort());
  assert.equal(replies.length, cases.length, r.stdout);
  return replies;
}

/** Each case's completions are exactly the ones given (one bash for all). */
function expectCompletions(cases: readonly (readonly [readonly string[], readonly string[]])[], cwd = dir): void {
  const got = completions(cases.map(([words]) => words), cwd);
  cases.forEach(([words, want], i) => assert.deepEqual(got[i], [...want].sort(), words.join(' ')));
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
    writeFileSync(join(dir, 'photo.jpg'), '');
    expectCompletions([
      [['v2a', 'pl'], ['play']],
      [['v2a', '--char'], ['--charset']],
      [['v2a', 'x.png', '--charset', 'd'], ['detailed', 'dots']],
      [['v2a', 'render', '--colors', ''], ['16', '256', 'none', 'truecolor']],
      [['v2a', 'play', 'clip.mp4', '--lo'], ['--loop']],
      [['v2a', 'completion', 'z'], ['zsh']],
      [['v2a', 'serve', '--po'], ['--port']],
    ]);
    assert.ok(completions([['v2a', 'pho']])[0]!.includes('photo.jpg'), 'file names for the default command');
  });

  test('bash: a file name with spaces or glob characters is one completion, for each file operand and -o', () => {
    const files = mkdtempSync(join(tmpdir(), 'v2a-files-'));
    try {
      for (const name of ['my photo.png', 'my\tclip.mp4', 'my[1].json', 'my*.png']) writeFileSync(join(files, name), '');
      const all = ['my\tclip.mp4', 'my photo.png', 'my*.png', 'my[1].json'];
      const operands = [['v2a', 'my'], ['v2a', 'render', 'my'], ['v2a', 'x.png', '-o', 'my'], ['v2a', 'play', 'my'], ['v2a', 'play', 'x.mp4', '--output', 'my'], ['v2a', 'decode', 'my'], ['v2a', 'decode', 'a.json', '-o', 'my']];
      expectCompletions([...operands.map((words) => [words, all] as const), [['v2a', 'my p'], ['my photo.png']]], files);
    } finally {
      rmSync(files, { recursive: true, force: true });
    }
  });

  test('bash: mcp --root offers folders, not files', () => {
    const files = mkdtempSync(join(tmpdir(), 'v2a-files-'));
    try {
      mkdirSync(join(files, 'pics one'));
      writeFileSync(join(files, 'pic.png'), '');
      expectCompletions([[['v2a', 'mcp', '--root', 'pi'], ['pics one']], [['v2a', 'mcp', '--root', '=', 'pi'], ['pics one']]], files);
    } finally {
      rmSync(files, { recursive: true, force: true });
    }
  });

  test('bash: option values complete after --flag= too, as bash splits it or as one word', () => {
    expectCompletions([
      [['v2a', 'x.png', '--charset', '='], ['binary', 'blocks', 'detailed', 'dots', 'minimal', 'standard']],
      [['v2a', 'x.png', '--charset', '=', 'd'], ['detailed', 'dots']],
      [['v2a', 'play', 'x.mp4', '--colors', '=', '2'], ['256']],
      [['v2a', '--charset=d'], ['--charset=detailed', '--charset=dots']],
      [['v2a', '--format=json'], ['--format=json', '--format=json-compact']],
      // A switch takes no value: nothing, not file names.
      [['v2a', 'x.png', '--color', '=', ''], []],
    ]);
  });

  test('bash: -V, --version and the help command are offered', () => {
    expectCompletions([
      [['v2a', '-V'], ['-V']],
      [['v2a', '--vers'], ['--version']],
      [['v2a', 'x.png', '--vers'], []],
      [['v2a', 'hel'], ['help']],
      [['v2a', 'help', 'pl'], ['play']],
    ]);
  });

  test('zsh: descriptions keep their colons and brackets, escaped', () => {
    assert.ok(scripts.zsh!.includes('[write to <file> instead of standard output (-\\: standard output)]'), 'the -o description, whole');
    assert.ok(scripts.zsh!.includes("'--charset=[Glyph ramp]:value:(standard detailed blocks binary dots minimal)'"), '--charset=value');
    assert.ok(scripts.zsh!.includes("'--root=[a folder imagePath may read from (repeatable)]:folder:_files -/'"), 'mcp --root: folders');
  });

  test('zsh: render completes every file operand (v2a a.png b<TAB>), completion its one shell', () => {
    const fn = (name: string) => new RegExp(`_v2a_${name}\\(\\) \\{[\\s\\S]*?\\n\\}`).exec(scripts.zsh!)?.[0] ?? '';
    assert.match(fn('render'), / '\*:file:_files'\n\}$/);
    assert.match(fn('completion'), / '1:shell:\(bash zsh fish\)'\n\}$/);
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
