/**
 * render()'s options come from callers of the public API too: glyph indices that would send the
 * WebAssembly kernels past their tables are a RangeError naming the option, never a trap.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { render, type RgbaImage } from '../src/core/index.js';

function image(width = 64, height = 48): RgbaImage {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) data.set([(i * 7) & 255, (i * 3) & 255, (i * 11) & 255, 255], i * 4);
  return { width, height, data };
}

test('a codebook with indices outside the charset, or a previous frame of another grid, is a RangeError naming the option', () => {
  const img = image();
  const ok = render(img, { columns: 16 });
  for (const codebook of [new Int32Array([9999]), new Int32Array([-1]), new Int32Array([])]) {
    assert.throws(() => render(img, { columns: 16 }, { codebook }), (e: Error) => e instanceof RangeError && /codebook/.test(e.message), String(codebook));
  }
  assert.throws(() => render(img, { columns: 16 }, { previous: new Uint16Array(3) }), (e: Error) => e instanceof RangeError && /previous must be a Uint16Array of the grid's \d+ cells/.test(e.message));
  // Valid ones render; the process carries on as before.
  assert.equal(render(img, { columns: 16 }, { previous: new Uint16Array(ok.columns * ok.rows) }).columns, 16);
  assert.deepEqual(render(img, { columns: 16 }).cells, ok.cells);
});

test('the error table is exported: a caller narrows on code without deep imports', async () => {
  const core = await import('../src/core/index.js');
  let caught: unknown;
  try {
    core.render(image(), { columns: 2 });
  } catch (err) {
    caught = err;
  }
  assert.ok(core.isV2aError(caught) && caught instanceof core.V2aError);
  assert.equal(caught.code, 'invalid-parameters');
  assert.equal(core.ERRORS[caught.code].status, 400);
});

/** `fn` throws `type` with a message matching `pattern`: a named argument, not a crash deep inside. */
function throwsNamed(fn: () => unknown, type: typeof TypeError | typeof RangeError, pattern: RegExp): void {
  assert.throws(fn, (e: Error) => e.constructor === type && pattern.test(e.message) && !/Cannot read|Cannot convert|Cannot destructure/.test(e.message), String(fn));
}

test('the library names a wrong argument: null, a string or a wrong type is a TypeError, a bad number a RangeError', async () => {
  const core = await import('../src/core/index.js');
  const img = image(8, 8);
  const any = (v: unknown) => v as never;
  throwsNamed(() => core.render(any(null)), TypeError, /^render: image must be an object \(got null\)/);
  throwsNamed(() => core.render(img, any(null)), TypeError, /^params must be an object \(got null\)/);
  // A string's characters are not parameters named "0", "1", ...
  throwsNamed(() => core.render(img, any('columns=80')), TypeError, /^params must be an object \(got a string\)/);
  throwsNamed(() => core.render(img, {}, any(null)), TypeError, /^render: options must be an object/);
  throwsNamed(() => core.parseParams(any(null), 'json'), TypeError, /^params must be an object/);
  throwsNamed(() => new core.FrameRenderer(any(null)), TypeError, /^params must be an object/);
  throwsNamed(() => new core.FrameRenderer().render(any(null)), TypeError, /^render: image must be an object/);
  // An empty frame is the caller's mistake, not "the image has no pixels" of an undecodable upload.
  throwsNamed(() => new core.FrameRenderer().render(any({})), TypeError, /^render: image\.data must be/);
  throwsNamed(() => core.formatResult(any(null)), TypeError, /^formatResult: result must be an object/);
  // Image sizes: a string, 0 or a negative pair (whose product passed the length check) are named.
  throwsNamed(() => core.render(any({ width: '8', height: 8, data: new Uint8Array(256) })), TypeError, /^render: image\.width must be a number \(got a string\)/);
  throwsNamed(() => core.render(any({ width: 0, height: 10, data: new Uint8Array(0) })), RangeError, /^render: image\.width must be a positive integer \(got 0\)/);
  throwsNamed(() => core.render(any({ width: -1, height: -4, data: new Uint8Array(16) })), RangeError, /^render: image\.width must be a positive integer \(got -1\)/);
  throwsNamed(() => core.render(any({ width: 8, height: 2.5, data: new Uint8Array(80) })), RangeError, /^render: image\.height must be a positive integer \(got 2\.5\)/);
  // The formats and the temporal filter, exported too.
  throwsNamed(() => core.formatText(any(null)), TypeError, /^grid \(a render result or cell grid\) must be an object \(got null\)/);
  throwsNamed(() => core.renderPng(any(null), any({ color: false })), TypeError, /^grid \(a render result or cell grid\) must be an object/);
  throwsNamed(() => core.formatPng(any(null)), TypeError, /^formatPng: result must be an object \(got null\)/);
  throwsNamed(() => new core.TemporalFilter(any(undefined)), TypeError, /^TemporalFilter: options must be an object \(got undefined\)/);
  throwsNamed(() => new core.TemporalFilter({ columns: 1e6, rows: 1e6 }), RangeError, /^columns x rows must be at most 320000 cells/);
  // Names that cannot be read as the caller meant them: a Map's, inherited ones, a misspelt option.
  // Each was ignored, and the render came out at the defaults.
  throwsNamed(() => core.render(img, any(new Map([['columns', 20]]))), TypeError, /^params must be a plain object of named fields \(got a Map\)$/);
  throwsNamed(() => core.render(img, any(new Date())), TypeError, /^params must be a plain object of named fields \(got a Date\)$/);
  throwsNamed(() => core.render(img, any(Object.create({ columns: 20 }))), TypeError, /^params: "columns" is inherited, not a field of its own/);
  throwsNamed(() => core.render(img, {}, any({ temporall: 1 })), RangeError, /^render: unknown option "temporall" \(the options are temporal, previous, codebook, tuned\)$/);
  throwsNamed(() => new core.TemporalFilter(any({ columns: 4, rows: 4, colunms: 5 })), RangeError, /^TemporalFilter: unknown option "colunms"/);
  // A string size was shown as if it were the number.
  throwsNamed(() => core.render(any({ width: 8, height: 8, data: new Uint8Array(256), sourceWidth: '10', sourceHeight: 10 })), RangeError, /\(got a string x 10\)$/);
  // A format asked of formatResult by name is refused as render refuses it (it was a RangeError with no code).
  assert.throws(() => core.formatResult(core.render(img, { columns: 8 }), any('gif')), (e: unknown) => core.isV2aError(e) && e.code === 'invalid-parameters' && e.errors?.[0]?.parameter === 'format');
  // A null-prototype object (a query string's parse) is still a record of fields.
  assert.equal(core.render(img, Object.assign(Object.create(null) as Record<string, unknown>, { columns: 12 })).columns, 12);
  throwsNamed(() => core.encodeBase64(any(null)), TypeError, /^encodeBase64: bytes must be a Uint8Array/);
  // A string's length was read as bytes: "hello" encoded as "AAAAAAA=".
  throwsNamed(() => core.encodeBase64(any('hello')), TypeError, /^encodeBase64: bytes must be a Uint8Array or Buffer \(got a string\)/);
  throwsNamed(() => core.decodeBase64(any(null)), TypeError, /^decodeBase64: input must be a string/);
  // Text that is no base64 is an input error of the one table, as the rest of the library's.
  assert.throws(() => core.decodeBase64('***'), (e: unknown) => e instanceof core.Base64Error && core.isV2aError(e) && e.code === 'invalid-base64' && /^invalid base64: /.test(e.message));
  throwsNamed(() => core.decodeBase64Input(any(42)), TypeError, /^decodeBase64Input: input must be/);
  throwsNamed(() => core.getGlyphSet(any('nope')), RangeError, /unknown charset "nope"/);
  // pngSize(NaN) gave NaN x NaN, and a scale of 3 a size no PNG of that scale has.
  throwsNamed(() => core.pngSize(NaN, 10), RangeError, /^pngSize: columns and rows must be positive integers/);
  throwsNamed(() => core.pngSize(10, 10, any(3)), RangeError, /^png scale must be one of 1, 2, 4, 8 \(got 3\)/);
  assert.deepEqual(core.pngSize(10, 5, 2), { width: 40, height: 40 });
  // Right arguments still work.
  assert.equal(core.decodeBase64(core.encodeBase64(new Uint8Array([1, 2, 3]))).length, 3);
});

test('v2a/node names a wrong argument before sharp sees it', async () => {
  const node = await import('../src/node/index.js');
  const sharp = (await import('sharp')).default;
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#888' } }).png().toBuffer();
  const any = (v: unknown) => v as never;
  const rejects = (p: () => Promise<unknown>, type: typeof TypeError | typeof RangeError, pattern: RegExp) =>
    assert.rejects(p, (e: Error) => e.constructor === type && pattern.test(e.message), pattern.source);
  await rejects(() => node.decodeImage(any(null)), TypeError, /^decode: input must be a Uint8Array or Buffer \(got null\)/);
  await rejects(() => node.decodeImage(any('photo.jpg')), TypeError, /^decode: input must be a Uint8Array or Buffer \(got a string\)/);
  await rejects(() => node.probeImage(any(undefined)), TypeError, /^probeImage: input must be/);
  await rejects(() => node.decodeImage(png, any(null)), TypeError, /^decode: options must be an object/);
  // sharp's own "Expected positive integer between 1 and 100000000 for width" reached the caller.
  await rejects(() => node.decodeImage(png, { targetWidth: 1e9 }), RangeError, /^decode: targetWidth must be an integer from 1 to 100000000/);
  // A timeout over sharp's hour was quietly made an hour.
  await rejects(() => node.decodeImage(png, { timeoutSeconds: 7200 }), RangeError, /^decode: timeoutSeconds must be a whole number of seconds from 0 to 3600/);
  // A maxBytes that is not a number was no limit at all.
  await rejects(() => node.decodeImage(png, any({ maxBytes: 'x' })), TypeError, /^decode: maxBytes must be a number \(got "x"\)/);
  // A misspelt limit was silently not applied.
  await rejects(() => node.decodeImage(png, any({ maxPixel: 10 })), RangeError, /^decode: unknown option "maxPixel" \(the options are maxPixels, /);
  const frames = node.decodeFrames(png, any({ maxframes: 1 }));
  await rejects(() => frames.next(), RangeError, /^decode: unknown option "maxframes"/);
  assert.throws(() => node.configureSharp({ concurrency: -1 }), /^RangeError: configureSharp: concurrency must be an integer >= 0/);
  assert.throws(() => node.configureSharp({ concurrency: 2.5 }), RangeError);
  assert.throws(() => node.configureSharp(any(null)), TypeError);
  assert.throws(() => node.configureSharp(any(new Map([['cache', true]]))), /^TypeError: configureSharp: options must be a plain object of named fields \(got a Map\)/);
  assert.equal((await node.decodeImage(png, { targetWidth: 1e8, timeoutSeconds: 3600 })).width, 4);
});

test('configureSharp refuses an option it does not know, as decodeImage does, before changing anything', async () => {
  const node = await import('../src/node/index.js');
  const sharp = (await import('sharp')).default;
  const before = [sharp.concurrency(), sharp.cache().memory.max];
  const any = (v: unknown) => v as never;
  // A misspelt option was accepted silently (and the cache switched off all the same).
  assert.throws(() => node.configureSharp(any({ foo: 1 })), (e: Error) => e.constructor === RangeError && e.message === 'configureSharp: unknown option "foo" (the options are concurrency, cache)');
  assert.throws(() => node.configureSharp(any({ concurency: 1 })), /^RangeError: configureSharp: unknown option "concurency"/);
  assert.deepEqual([sharp.concurrency(), sharp.cache().memory.max], before);
});

test('binary data that is not a Uint8Array is named, with the view to pass instead', async () => {
  const node = await import('../src/node/index.js');
  const core = await import('../src/core/index.js');
  const sharp = (await import('sharp')).default;
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#888' } }).png().toBuffer();
  const any = (v: unknown) => v as never;
  const buffer = png.buffer.slice(png.byteOffset, png.byteOffset + png.byteLength);
  // "(got an object)" for an ArrayBuffer left the caller guessing.
  await assert.rejects(node.decodeImage(any(buffer)), (e: Error) => e.constructor === TypeError && e.message === 'decode: input must be a Uint8Array or Buffer (got an ArrayBuffer: pass new Uint8Array(buffer))');
  await assert.rejects(node.decodeImage(any(new Uint8ClampedArray(buffer))), (e: Error) => e.constructor === TypeError && e.message === 'decode: input must be a Uint8Array or Buffer (got a Uint8ClampedArray: pass new Uint8Array(view.buffer, view.byteOffset, view.byteLength))');
  throwsNamed(() => core.encodeBase64(any(new DataView(buffer))), TypeError, /^encodeBase64: bytes must be a Uint8Array or Buffer \(got a DataView: pass new Uint8Array\(view\.buffer/);
  // As the message says, the same bytes decode.
  assert.equal((await node.decodeImage(new Uint8Array(buffer))).width, 4);
});

test('renderPng names a missing or wrong option, and keeps cellAspect to the parameter\'s range', async () => {
  const core = await import('../src/core/index.js');
  const r = render(image(), { columns: 16 });
  const any = (v: unknown) => v as never;
  // A plain "Error: not a hex colour: undefined" from deep inside.
  throwsNamed(() => core.renderPng(r, any({ color: true })), TypeError, /^renderPng: options\.monoColor must be a string, a hex colour such as #e5e5e5 \(got undefined\)$/);
  throwsNamed(() => core.renderPng(r, any({ color: false, monoColor: 'red' })), RangeError, /^renderPng: options\.monoColor must be a hex colour such as #e5e5e5, #rrggbb or #rgb \(got "red"\)$/);
  throwsNamed(() => core.renderPng(r, any({ monoColor: '#fff' })), TypeError, /^renderPng: options\.color must be true or false \(got undefined\)$/);
  throwsNamed(() => core.renderPng(r, any(null)), TypeError, /^renderPng: options must be an object \(got null\)$/);
  throwsNamed(() => core.renderPng(r, any({ color: false, monoColor: '#fff', deflate: 'zlib' })), TypeError, /^renderPng: options\.deflate must be a function \(got a string\)$/);
  // 0.001 made 8000-px-tall cells; the range is the cellAspect parameter's own.
  const { min, max } = core.PARAM_BY_NAME.get('cellAspect') as { min: number; max: number };
  for (const cellAspect of [0.001, min - 0.01, max + 0.01, Number.NaN, Infinity]) {
    throwsNamed(() => core.renderPng(r, { color: false, monoColor: '#fff', cellAspect }), RangeError, new RegExp(`^png cellAspect must be a number from ${min} to ${max}, as the parameter \\(got ${cellAspect}\\)$`));
  }
  throwsNamed(() => core.pngSize(10, 10, 1, 0.001), RangeError, /^png cellAspect must be a number from/);
  throwsNamed(() => core.pngSize(10, 10, 1, any('0.5')), TypeError, /^png cellAspect must be a number \(got a string\)$/);
  // The range's ends and a result's own params still draw (its other members are ignored).
  for (const cellAspect of [min, max]) assert.equal(core.pngSize(1, 1, 1, cellAspect).width, 8);
  assert.deepEqual(core.renderPng(r, r.params), core.formatPng(r));
});

test('isV2aError knows a V2aError of another copy of v2a (a second install, a bundle), and nothing else', async () => {
  const core = await import('../src/core/index.js');
  // A second instance of the module, as a second install or a bundled copy loads.
  const copy = (await import(new URL('../src/core/errors.ts?another-copy', import.meta.url).href)) as typeof import('../src/core/errors.js');
  assert.notEqual(copy.V2aError, core.V2aError);
  const foreign = new copy.V2aError('invalid-parameters', 'columns must be an integer from 8 to 400');
  assert.equal(foreign instanceof core.V2aError, false);
  assert.equal(core.isV2aError(foreign), true, 'instanceof alone failed here');
  assert.equal(copy.isV2aError(new core.V2aError('usage', 'x')), true);
  // Subclasses (CompactDecodeError, Base64Error, ...) carry it too.
  assert.throws(() => core.decodeBase64('***'), (e: unknown) => copy.isV2aError(e) && e.code === 'invalid-base64');
  // Strict: an error or object with a code is not one, nor a branded one of a code this copy lacks.
  assert.equal(core.isV2aError(Object.assign(new Error('x'), { code: 'invalid-parameters' })), false);
  assert.equal(core.isV2aError({ name: 'V2aError', code: 'invalid-parameters', message: 'x' }), false);
  assert.equal(core.isV2aError(JSON.parse(JSON.stringify({ ...foreign, message: 'x' }))), false);
  assert.equal(core.isV2aError(Object.assign(new copy.V2aError('usage', 'x'), { code: 'no-such-code' })), false);
  for (const v of [null, undefined, 'invalid-parameters', 42]) assert.equal(core.isV2aError(v), false);
  // The brand is no own property: JSON and spreads of an error are as before.
  assert.deepEqual(Object.getOwnPropertySymbols(foreign), []);
});

test('a value JSON cannot write (a BigInt, a cycle, a throwing toJSON) is refused as the parameter\'s, not a TypeError from inside', async () => {
  const { ParamValidationError } = await import('../src/core/index.js');
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  for (const [value, shown] of [[40n, '40n'], [cycle, 'an object JSON cannot write'], [{ toJSON() { throw new Error('x'); } }, 'an object JSON cannot write']] as const) {
    assert.throws(() => render(image(), { columns: value as never }), (e: Error) => e instanceof ParamValidationError && e.message === `columns must be an integer from 8 to 400 (got ${shown})`);
  }
});

test('the exported tables are frozen: a caller cannot change every later render\'s validation', async () => {
  const { PARAMS, ERRORS, CHARSETS } = await import('../src/core/index.js');
  assert.throws(() => { (PARAMS[0] as { max: number }).max = 100_000; }, TypeError);
  assert.throws(() => { (ERRORS['invalid-parameters'] as { status: number }).status = 200; }, TypeError);
  assert.throws(() => { (CHARSETS as unknown as string[]).push('mine'); }, TypeError);
  assert.throws(() => render(image(), { columns: 1000 }), /columns must be an integer from 8 to 400/);
  // Object.freeze leaves a Map's or Set's entries writable: these refuse a change.
  const core = await import('../src/core/index.js');
  assert.throws(() => (core.PARAM_BY_NAME as Map<string, unknown>).set('columns', { name: 'columns', type: 'integer', min: 1, max: 99999, default: 5 }), /read-only/);
  assert.throws(() => (core.PARAM_BY_NAME as Map<string, unknown>).delete('columns'), /read-only/);
  assert.throws(() => (core.EXTENSION_PARAMS as Set<string>).add('columns'), /read-only/);
  assert.throws(() => render(image(), { columns: 5 }), /columns must be an integer from 8 to 400/);
  assert.equal(core.PARAM_BY_NAME.get('columns')?.name, 'columns');
  // Every other exported object, array and schema is frozen as deep as it goes.
  for (const [name, value] of Object.entries(core)) {
    if (value !== null && typeof value === 'object' && !(value instanceof Map) && !(value instanceof Set)) assert.ok(Object.isFrozen(value), `${name} is frozen`);
  }
  assert.throws(() => { (core.PARAMS_SCHEMA as { additionalProperties: boolean }).additionalProperties = true; }, TypeError);
  assert.throws(() => { ((core.JSON_OUTPUT_SCHEMA.properties as Record<string, { type?: string }>).columns!).type = 'string'; }, TypeError);
});

test('a result whose cells were chosen for two colours is not formatted as plain text by default (it would read as noise)', async () => {
  const { formatResult, isV2aError } = await import('../src/core/index.js');
  // Colour without a format: the result may be formatted later, so blocks get an ink and a ground.
  const two = render(image(), { columns: 24, charset: 'blocks', color: true });
  assert.ok(two.background, 'two colours per cell');
  assert.throws(() => formatResult(two), (e: unknown) => isV2aError(e) && e.code === 'invalid-parameters' && e.errors?.[0]?.parameter === 'format' && /render with format: 'text'/.test(e.message));
  assert.ok(formatResult(two, 'ansi').body.includes('\u001b['));
  // Asked for as text, the render chooses one-colour glyphs, and formats.
  const text = render(image(), { columns: 24, charset: 'blocks', color: true, format: 'text' });
  assert.equal(text.background, undefined);
  assert.equal(formatResult(text).body, formatResult(render(image(), { columns: 24, charset: 'blocks', format: 'text' })).body);
});

test('importing v2a/node leaves sharp\'s process-wide settings alone (an app may use sharp for its own work)', async () => {
  const { spawnSync } = await import('node:child_process');
  const script = "import sharp from 'sharp'; const before = sharp.cache().memory.max; await import('./src/node/index.ts'); console.log(before, sharp.cache().memory.max);";
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: new URL('..', import.meta.url) });
  assert.equal(r.status, 0, r.stderr);
  const [before, after] = r.stdout.trim().split(' ').map(Number);
  assert.ok(before! > 0, 'sharp caches by default');
  assert.equal(after, before);
});

test('video options and results of the wrong shape are TypeErrors naming them, not failures deep inside', async () => {
  const { formatResult } = await import('../src/core/index.js');
  const any = (v: unknown) => v as never;
  assert.throws(() => render(image(), {}, { temporal: any({}) }), (e: Error) => e instanceof TypeError && e.message === 'render: options.temporal must be a TemporalFilter');
  assert.throws(() => render(image(), {}, { tuned: any({}) }), (e: Error) => e instanceof TypeError && /^render: options\.tuned\.params must be an object \(got undefined\)/.test(e.message));
  assert.throws(() => render(image(), {}, { tuned: any(null) }), (e: Error) => e instanceof TypeError && /^render: options\.tuned \(a tuning result: an earlier result's \{ params, report: director \}\) must be an object/.test(e.message));
  // An earlier result's params and report are a tuning; each part of either is checked.
  const base = render(image(), { columns: 16 });
  const again = render(image(), { columns: 16 }, { tuned: { params: base.params, report: base.director } });
  assert.deepEqual([again.params, [...again.cells]], [base.params, [...base.cells]]);
  assert.throws(() => render(image(), {}, { tuned: any({ params: base.params, report: {} }) }), (e: Error) => e instanceof TypeError && e.message === 'render: options.tuned.report.metrics must be an object (got undefined)');
  assert.throws(() => render(image(), {}, { tuned: any({ params: base.params, report: { ...base.director, score: '1' } }) }), (e: Error) => e instanceof TypeError && e.message === 'render: options.tuned.report.score must be a number (got a string)');
  // NaN reached the kernels (a memory fault), and -100 was used as the contrast.
  for (const [name, value] of [['gamma', Number.NaN], ['contrast', -100], ['denoise', Number.NaN], ['autoLevels', Number.NaN]] as const) {
    assert.throws(() => render(image(), {}, { tuned: { params: { ...base.params, [name]: value }, report: base.director } }), (e: Error) => e.name === 'ParamValidationError' && e.message.includes(name), name);
  }
  assert.throws(() => formatResult(any({})), (e: Error) => e instanceof TypeError && /^formatResult: result\.params \(a render result\) must be an object/.test(e.message));
});
