/**
 * The CLI's colour from the environment (color-support.ts), in the order Node's
 * tty.WriteStream.getColorDepth reads it: FORCE_COLOR, exact; then the off switches NO_COLOR,
 * NODE_DISABLE_COLORS and TERM=dumb; then CLICOLOR_FORCE; then COLORTERM and TERM on a terminal.
 * The off switches only turn the default off: colour turned on by hand keeps the terminal's depth,
 * piped too. And what the help
 * says of it: colour's and the format's defaults as the CLI chooses them, the environment in that
 * order, and the help command.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { colorDepthWhenOn, detectColor } from '../src/cli/color-support.js';
import { resolveColor } from '../src/cli/view.js';
import { V2A_BIN, cliEnv, ensureCliBuilt } from './helpers/cli-run.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

before(ensureCliBuilt);

const XTERM_256 = { TERM: 'xterm-256color' };

describe('colour detection: FORCE_COLOR, then NO_COLOR / NODE_DISABLE_COLORS / TERM=dumb, then the terminal', () => {
  test('FORCE_COLOR is exact, piped or not, whatever the terminal claims', () => {
    for (const isTty of [false, true]) {
      for (const [value, depth] of [['1', '16'], ['', '16'], ['true', '16'], ['2', '256'], ['3', 'truecolor'], ['0', 'none'], ['false', 'none']] as const) {
        assert.equal(detectColor({ FORCE_COLOR: value, TERM: 'xterm-256color', COLORTERM: 'truecolor' }, isTty), depth, `FORCE_COLOR=${value} isTty=${isTty}`);
      }
    }
  });

  test('FORCE_COLOR comes before NO_COLOR and TERM=dumb', () => {
    assert.equal(detectColor({ NO_COLOR: '1', FORCE_COLOR: '3' }, false), 'truecolor');
    assert.equal(detectColor({ TERM: 'dumb', FORCE_COLOR: '2' }, true), '256');
  });

  test('NO_COLOR, NODE_DISABLE_COLORS and TERM=dumb: none, whatever COLORTERM says', () => {
    for (const env of [{ NO_COLOR: '1' }, { NODE_DISABLE_COLORS: '1' }, { TERM: 'dumb' }]) {
      assert.equal(detectColor({ ...XTERM_256, COLORTERM: 'truecolor', ...env }, true), 'none', JSON.stringify(env));
    }
    // Empty is unset (no-color.org).
    assert.equal(detectColor({ ...XTERM_256, NO_COLOR: '' }, true), '256');
  });

  test('a terminal: COLORTERM, then TERM; piped: none', () => {
    assert.equal(detectColor({ ...XTERM_256, COLORTERM: 'truecolor' }, true), 'truecolor');
    assert.equal(detectColor(XTERM_256, true), '256');
    assert.equal(detectColor({ TERM: 'xterm' }, true), '16');
    assert.equal(detectColor({}, true), 'none');
    assert.equal(detectColor({ ...XTERM_256, COLORTERM: 'truecolor' }, false), 'none');
  });

  test('colour turned on by hand: the depth without the off switches', () => {
    for (const off of [{ NO_COLOR: '1' }, { NODE_DISABLE_COLORS: '1' }, { FORCE_COLOR: '0' }, {}]) {
      assert.equal(colorDepthWhenOn({ ...XTERM_256, ...off }), '256', JSON.stringify(off));
    }
    assert.equal(colorDepthWhenOn({ TERM: 'dumb', COLORTERM: 'truecolor' }), 'truecolor');
    assert.equal(colorDepthWhenOn({ TERM: 'dumb' }), '16');
    assert.equal(colorDepthWhenOn({ NO_COLOR: '1', FORCE_COLOR: '2' }), '256');
    // Nothing tells a depth: 16, what every colour terminal shows (as FORCE_COLOR=1).
    assert.equal(colorDepthWhenOn({}), '16');
  });

  test('--color piped: the depth of the terminal it runs in, as chafa (it was always truecolor, whatever TERM said)', () => {
    const piped = (env: Record<string, string>, params: Record<string, unknown> = { color: true }) => resolveColor(params, {}, undefined, env, false).colorDepth;
    assert.equal(piped({ TERM: 'linux' }), '16');
    assert.equal(piped({ TERM: 'screen-256color' }), '256');
    assert.equal(piped({ TERM: 'screen-256color', COLORTERM: 'truecolor' }), undefined, 'truecolor: the parameter default');
    assert.equal(piped({ TERM: 'xterm-256color' }, { format: 'ansi' }), '256');
    // FORCE_COLOR's level and --colors say otherwise.
    assert.equal(piped({ TERM: 'linux', FORCE_COLOR: '3' }), undefined);
    assert.equal(piped({ TERM: 'screen-256color', FORCE_COLOR: '1' }), '16');
    assert.deepEqual(resolveColor({}, { colors: 'truecolor' }, undefined, { TERM: 'linux' }, false), { color: true, colorDepth: 'truecolor' });
    // Nothing tells a depth: 16, as CLICOLOR_FORCE (it was truecolor).
    assert.equal(piped({}), '16');
    assert.equal(piped({}, { format: 'ansi' }), '16');
  });

  test('CLICOLOR_FORCE (not 0): colour when piped, at the terminal\'s depth, else 16; NO_COLOR still wins', () => {
    assert.equal(detectColor({ CLICOLOR_FORCE: '1' }, false), '16');
    assert.equal(detectColor({ CLICOLOR_FORCE: '1', ...XTERM_256 }, false), '256');
    assert.equal(detectColor({ CLICOLOR_FORCE: '1', COLORTERM: 'truecolor' }, false), 'truecolor');
    for (const off of ['0', '']) assert.equal(detectColor({ CLICOLOR_FORCE: off, ...XTERM_256 }, false), 'none', `CLICOLOR_FORCE=${off}`);
    assert.equal(detectColor({ CLICOLOR_FORCE: '1', NO_COLOR: '1', ...XTERM_256 }, false), 'none');
    assert.equal(detectColor({ CLICOLOR_FORCE: '1', FORCE_COLOR: '0' }, false), 'none', 'FORCE_COLOR first');
    assert.deepEqual(resolveColor({}, {}, undefined, { CLICOLOR_FORCE: '1', TERM: 'linux' }, false), { color: true, colorDepth: '16' });
    // Without TERM or COLORTERM: 16, as documented (it was truecolor); --colors still chooses.
    assert.deepEqual(resolveColor({}, {}, undefined, { CLICOLOR_FORCE: '1' }, false), { color: true, colorDepth: '16' });
    assert.deepEqual(resolveColor({}, { colors: 'truecolor' }, undefined, { CLICOLOR_FORCE: '1' }, false), { color: true, colorDepth: 'truecolor' });
  });

  test('CLICOLOR=0: no colour by default on a terminal, unless CLICOLOR_FORCE; --color still on', () => {
    assert.equal(detectColor({ CLICOLOR: '0', ...XTERM_256 }, true), 'none');
    assert.equal(detectColor({ CLICOLOR: '1', ...XTERM_256 }, true), '256');
    assert.equal(detectColor({ CLICOLOR: '0', CLICOLOR_FORCE: '1', ...XTERM_256 }, false), '256', 'CLICOLOR_FORCE wins');
    assert.deepEqual(resolveColor({ color: true }, {}, undefined, { CLICOLOR: '0', TERM: 'linux' }, true), { color: true, colorDepth: '16' });
  });

  test('-c none: no colour, and ANSI\'s mono ink in the depth the terminal has, as --no-color (it was a 24-bit code on a 16-colour console)', () => {
    for (const isTty of [true, false]) {
      assert.deepEqual(resolveColor({ format: 'ansi' }, { colors: 'none' }, undefined, { TERM: 'linux' }, isTty), { format: 'ansi', color: false, colorDepth: '16' });
      assert.deepEqual(resolveColor({ format: 'ansi', color: false }, {}, undefined, { TERM: 'linux' }, isTty), { format: 'ansi', color: false, colorDepth: '16' });
    }
    assert.deepEqual(resolveColor({}, { colors: 'none' }, undefined, { TERM: 'xterm-256color' }, true), { color: false });
    assert.deepEqual(resolveColor({ format: 'ansi' }, { colors: 'none' }, 'art.ans', { TERM: 'linux' }, true), { format: 'ansi', color: false }, 'a file keeps the parameter default');
  });

  test('piped with nothing that tells a depth (no TERM, COLORTERM or FORCE_COLOR): CLICOLOR_FORCE=1 and --color write 16 colours', async () => {
    const png = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#c04020' } }).png().toBuffer();
    const env = cliEnv({ V2A_DEBUG: '' }, { terminal: true });
    for (const [args, extra] of [[[], { CLICOLOR_FORCE: '1' }], [['--color'], {}]] as const) {
      const r = spawnSync(process.execPath, [V2A_BIN, '-', '-w', '20', ...args], { cwd: ROOT, encoding: 'utf8', input: png, env: { ...env, ...extra } });
      assert.equal(r.status, 0, r.stderr);
      const codes = [...r.stdout.matchAll(/\x1b\[([0-9;]*)m/g)].map((m) => m[1]!);
      assert.ok(codes.length > 0, JSON.stringify(args));
      for (const c of codes) assert.match(c, /^(0|3[0-7]|9[0-7])$/, `${JSON.stringify(args)} ${JSON.stringify(extra)}: SGR ${c}`);
    }
  });

  test('--color with NO_COLOR on a 256-colour terminal renders at 256 colours, as without NO_COLOR', () => {
    for (const env of [XTERM_256, { ...XTERM_256, NO_COLOR: '1' }]) {
      assert.deepEqual(resolveColor({ color: true }, {}, undefined, env, true), { color: true, colorDepth: '256' }, JSON.stringify(env));
    }
    assert.deepEqual(resolveColor({ format: 'ansi' }, {}, undefined, { TERM: 'dumb' }, true), { format: 'ansi', colorDepth: '16' });
    // The default is still off.
    assert.deepEqual(resolveColor({}, {}, undefined, { ...XTERM_256, NO_COLOR: '1' }, true), {});
  });
});

function v2a(args: readonly string[]) {
  return spawnSync(process.execPath, [V2A_BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, V2A_DEBUG: '' } });
}

describe('help', () => {
  test('v2a --help: --color and --format defaults as the CLI chooses them; colour variables in the order they are read', () => {
    const r = v2a(['--help']);
    assert.equal(r.status, 0, r.stderr);
    // Each item on one line: help is wrapped to the width (80 piped), continuation lines indented.
    const items = r.stdout.replace(/\n {3,}/g, ' ');
    assert.match(items, /^ {2}--color, --no-color +a switch; default on when standard output is a colour terminal/m);
    assert.match(items, /^ {2}--format <name> +one of .*; default ansi when colour is on, else text/m);
    const order = ['FORCE_COLOR', 'NO_COLOR, NODE_DISABLE_COLORS', 'CLICOLOR_FORCE', 'COLORTERM, TERM, TERM_PROGRAM'].map((name) => r.stdout.indexOf(`\n  ${name} (default`));
    assert.ok(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!)), `order: ${order.join(' ')}`);
  });

  test('v2a play --help: colour on for a colour terminal, and --no-color is not called the default', () => {
    const r = v2a(['play', '--help']);
    assert.equal(r.status, 0, r.stderr);
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.match(text, /default on when standard output is a colour terminal/);
    assert.match(text, /--no-color turn --color off --/);
    // --columns' default 120 is only the piped one: on a terminal the clip fits it.
    assert.match(text, /default 120; the same as -w; when neither is given, the clip fits the terminal \(piped without COLUMNS, or with -o: 120\)/);
  });

  test('v2a help help: the help command\'s help, on stdout, exit 0', () => {
    const r = v2a(['help', 'help']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^Usage: v2a help \[options\] \[command\]/);
  });

  test('v2a help <unknown>: one usage line naming it, exit 2', () => {
    const r = v2a(['help', 'bogus']);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, "v2a: unknown command 'bogus' (see v2a --help)\n");
  });
});
