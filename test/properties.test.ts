/**
 * Property tests (fast-check) where an example or two would not do: each property is checked on
 * a few hundred generated cases against an independent oracle, with a fixed seed so a failure
 * reproduces. The compact decoder, string parameter parsing, the Redactor, the IP policy, the
 * codebook's dynamic programme and the imageBase64 decoder.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { V2aError } from '../src/core/errors.js';
import { Base64Error, decodeBase64Input } from '../src/core/format/base64.js';
import { buildCompact, CompactDecodeError, decodeCompact } from '../src/core/format/compact.js';
import { PARAMS, parseParams, type ParamDef } from '../src/core/params/index.js';
import { chooseCodebook } from '../src/core/pipeline/codebook.js';
import { isPublicAddress, NON_PUBLIC_RANGES } from '../src/server/net/ip-policy.js';
import { Redactor } from '../src/server/telemetry/redact.js';

const RUNS = { numRuns: 300, seed: 20261123 };

describe('decodeCompact', () => {
  const grid = fc
    .record({ columns: fc.integer({ min: 1, max: 12 }), rows: fc.integer({ min: 1, max: 6 }), glyphs: fc.array(fc.constantFrom(' ', '.', '#', '@', '▀', '⣿', '"', '\\'), { minLength: 1, maxLength: 5 }) })
    .chain(({ columns, rows, glyphs }) =>
      fc.record({
        columns: fc.constant(columns),
        rows: fc.constant(rows),
        glyphs: fc.constant(glyphs),
        cells: fc.array(fc.integer({ min: 0, max: glyphs.length - 1 }), { minLength: columns * rows, maxLength: columns * rows }),
        colors: fc.uint8Array({ minLength: columns * rows * 3, maxLength: columns * rows * 3 }),
      }),
    );

  test('round-trips every grid: text and chroma come back exactly', () => {
    fc.assert(
      fc.property(grid, (g) => {
        const doc = buildCompact({ columns: g.columns, rows: g.rows, glyphs: g.glyphs, cells: Uint16Array.from(g.cells), colors: g.colors });
        const back = decodeCompact(JSON.stringify(doc));
        assert.equal(back.columns, g.columns);
        assert.equal(back.rows, g.rows);
        assert.deepEqual(back.lines, Array.from({ length: g.rows }, (_, y) => g.cells.slice(y * g.columns, (y + 1) * g.columns).map((c) => g.glyphs[c]).join('')));
        assert.deepEqual([...back.rgb], [...g.colors]);
      }),
      RUNS,
    );
  });

  test('any damage is refused with CompactDecodeError, never another exception', () => {
    const damage = fc.oneof(
      fc.jsonValue(),
      fc.record({ v: fc.jsonValue(), columns: fc.jsonValue(), rows: fc.jsonValue(), text: fc.jsonValue(), chroma: fc.jsonValue() }, { requiredKeys: [] }),
      grid.chain((g) => {
        const doc = buildCompact({ columns: g.columns, rows: g.rows, glyphs: g.glyphs, cells: Uint16Array.from(g.cells), colors: g.colors }) as unknown as Record<string, unknown>;
        return fc.record({ key: fc.constantFrom('v', 'columns', 'rows', 'text', 'chroma'), value: fc.jsonValue() }).map(({ key, value }) => ({ ...doc, [key]: value }));
      }),
    );
    fc.assert(
      fc.property(damage, (doc) => {
        try {
          decodeCompact(doc as object);
        } catch (err) {
          assert.ok(err instanceof CompactDecodeError, String(err));
          assert.ok(err instanceof V2aError && err.code === 'invalid-compact');
        }
      }),
      RUNS,
    );
  });
});

describe('string parameter parsing', () => {
  const defs = PARAMS as readonly ParamDef[];

  /** A value of the parameter's domain and how a query string or CLI flag would spell it. */
  const spelled = (def: ParamDef): fc.Arbitrary<{ value: unknown; text: string }> => {
    switch (def.type) {
      case 'integer': return fc.integer({ min: def.min, max: def.max }).map((v) => ({ value: v, text: String(v) }));
      case 'number': return fc.double({ min: def.min, max: def.max, noNaN: true }).map((v) => ({ value: v, text: String(v) }));
      case 'boolean': return fc.constantFrom(['true', true], ['1', true], ['FALSE', false], ['0', false]).map(([text, value]) => ({ value, text: text as string }));
      case 'enum': return fc.constantFrom(...def.values).map((v) => ({ value: v, text: v }));
      case 'color': return fc.uint8Array({ minLength: 3, maxLength: 3 }).map((b) => {
        const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
        return { value: `#${hex}`, text: `#${hex.toUpperCase()}` };
      });
      case 'glyphs': return fc.uniqueArray(fc.integer({ min: 0x21, max: 0x7e }), { minLength: 1, maxLength: 20 })
        .map((cps) => String.fromCodePoint(...cps)).map((v) => ({ value: v, text: v }));
    }
  };

  test('every value in a domain, spelled as text, parses back to itself', () => {
    for (const def of defs) {
      fc.assert(
        fc.property(spelled(def), ({ value, text }) => {
          const r = parseParams({ [def.name]: text }, 'strings');
          assert.ok(r.ok, `${def.name}=${text}: ${JSON.stringify(!r.ok && r.errors)}`);
          assert.equal((r.params as Record<string, unknown>)[def.name], value);
        }),
        { ...RUNS, numRuns: 60 },
      );
    }
  });

  test('any other text is refused naming the parameter, never thrown or clamped', () => {
    for (const def of defs) {
      fc.assert(
        fc.property(fc.string({ maxLength: 12 }), (text) => {
          const r = parseParams({ [def.name]: text }, 'strings');
          if (r.ok) {
            // Accepted: it must be in the domain exactly as spelled (no clamping).
            const v = (r.params as Record<string, unknown>)[def.name];
            if (def.type === 'integer' || def.type === 'number') {
              assert.equal(v, Number(text.trim()));
              assert.ok((v as number) >= def.min && (v as number) <= def.max);
            }
          } else {
            assert.equal(r.errors.length, 1);
            assert.equal(r.errors[0]!.parameter, def.name);
            assert.match(r.errors[0]!.message, new RegExp(`^${def.name} must be `));
          }
        }),
        { ...RUNS, numRuns: 80 },
      );
    }
  });
});

describe('the Redactor', () => {
  const KEY_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const key = fc.string({ unit: fc.constantFrom(...KEY_CHARS), minLength: 32, maxLength: 48 }).map((k) => `pk_${k}`);
  const around = fc.string({ maxLength: 40 });

  test('no 12-character fragment of the key survives, wherever it is embedded', () => {
    fc.assert(
      fc.property(key, around, around, fc.constantFrom('plain', 'bearer', 'header', 'query', 'json'), (k, a, b, how) => {
        const embedded = { plain: k, bearer: `Bearer ${k}`, header: `x-platform-api-key: ${k}`, query: `https://h.example/p?key=${k}&x=1`, json: JSON.stringify({ key: k }) }[how];
        const out = new Redactor([k]).string(`${a}${embedded}${b}`);
        for (let at = 0; at + 12 <= k.length; at++) assert.ok(!out.includes(k.slice(at, at + 12)), `fragment at ${at} of ${how} survived: ${out}`);
      }),
      RUNS,
    );
  });
});

/** IPv4 or IPv6 text to a BigInt and its width in bits: an oracle independent of node:net. */
function toBits(address: string): { value: bigint; bits: 32 | 128 } {
  if (!address.includes(':')) {
    return { value: address.split('.').reduce((v, part) => (v << 8n) | BigInt(Number(part)), 0n), bits: 32 };
  }
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = toBits(v4[1]!).value;
    text = text.slice(0, -v4[1]!.length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return { value: groups.reduce((v, g) => (v << 16n) | BigInt(parseInt(g, 16)), 0n), bits: 128 };
}

function inCidr(address: string, cidr: string): boolean {
  const [net, len] = cidr.split('/') as [string, string];
  const a = toBits(address), n = toBits(net);
  if (a.bits !== n.bits) return false;
  const shift = BigInt(a.bits - Number(len));
  return a.value >> shift === n.value >> shift;
}

/** Public: in no listed range; for IPv6 also global unicast (2000::/3). IPv4-mapped forms are listed. */
function oraclePublic(address: string): boolean {
  if (NON_PUBLIC_RANGES.some(([cidr]) => inCidr(address, cidr))) return false;
  return !address.includes(':') || inCidr(address, '2000::/3');
}

describe('IP policy against an independent oracle', () => {
  // Addresses near every range's edges as well as anywhere.
  const edges = NON_PUBLIC_RANGES.flatMap(([cidr]) => {
    const [net, len] = cidr.split('/') as [string, string];
    const { value, bits } = toBits(net);
    const size = 1n << BigInt(bits - Number(len));
    return [value - 1n, value, value + size - 1n, value + size].filter((v) => v >= 0n && v < 1n << BigInt(bits)).map((v) => ({ v, bits }));
  });
  const fromBits = ({ v, bits }: { v: bigint; bits: number }): string =>
    bits === 32
      ? [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join('.')
      : Array.from({ length: 8 }, (_, i) => ((v >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
  const address = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.constantFrom(...edges).map(fromBits),
    fc.ipV4().map((a) => `::ffff:${a}`),
  );

  test('isPublicAddress agrees with the oracle', () => {
    fc.assert(fc.property(address, (a) => assert.equal(isPublicAddress(a), oraclePublic(a), a)), { ...RUNS, numRuns: 2000 });
  });
});

describe('the codebook dynamic programme against brute force', () => {
  const BINS = 256;
  /** Squared error of quantising the binned targets to the nearest of `levels`. */
  function bruteError(levels: readonly number[], targets: Float32Array): number {
    let e = 0;
    for (const t of targets) {
      const b = Math.min(BINS - 1, Math.max(0, Math.floor(t * BINS)));
      const x = (b + 0.5) / BINS;
      let best = Infinity;
      for (const l of levels) best = Math.min(best, (x - l) ** 2);
      e += best;
    }
    return e;
  }

  const problem = fc.record({
    // Distinct levels at least 0.01 apart (closer ones are grouped as one code by design).
    steps: fc.array(fc.double({ min: 0.01, max: 0.3, noNaN: true }), { minLength: 1, maxLength: 8 }),
    targets: fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { minLength: 1, maxLength: 60 }),
    maxRmse: fc.double({ min: 0.005, max: 0.3, noNaN: true }),
  });

  test('adaptive picks the fewest levels within maxRmse, with the least error of that size', () => {
    fc.assert(
      fc.property(problem, ({ steps, targets, maxRmse }) => {
        const levels = steps.reduce<number[]>((acc, s) => [...acc, (acc.at(-1) ?? -s) + s], []).map((l) => Math.min(1, l));
        if (new Set(levels).size !== levels.length) return; // clipped at 1: not distinct
        const t = Float32Array.from(targets);
        const n = levels.length;
        const book = chooseCodebook(levels, levels.map((_, i) => i), t, 'adaptive', maxRmse);
        // Brute force: every subset, by size.
        let bestSize = n, bestErr = Infinity;
        for (let size = 1; size <= n; size++) {
          let errOfSize = Infinity;
          for (let mask = 1; mask < 1 << n; mask++) {
            if (popcount(mask) !== size) continue;
            errOfSize = Math.min(errOfSize, bruteError(levels.filter((_, i) => mask & (1 << i)), t));
          }
          bestErr = errOfSize;
          if (Math.sqrt(errOfSize / t.length) <= maxRmse) { bestSize = size; break; }
        }
        assert.equal(book.indices.length, bestSize, `levels ${levels}`);
        assert.ok(Math.abs(book.rmse - Math.sqrt(bestErr / t.length)) < 1e-9, `rmse ${book.rmse} vs brute ${Math.sqrt(bestErr / t.length)}`);
      }),
      RUNS,
    );
  });
});

describe('the imageBase64 decoder against an independent oracle', () => {
  /** What the decoder promises, by other means: the envelope, then strict canonical base64 via Buffer. */
  function oracle(input: string): Uint8Array | null {
    let s = input.trim();
    const m = /^data:([^,;]*)((?:;[^,;]*)*?);base64,/i.exec(s);
    if (m) s = s.slice(m[0].length);
    s = s.replace(/[ \t\r\n\f]/g, '');
    if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*(?:={0,2})$/.test(s)) return null;
    const bytes = Buffer.from(s, 'base64');
    return bytes.toString('base64') === s ? new Uint8Array(bytes) : null; // canonical: zero pad bits
  }

  const EDITS = ['*', '=', '==', '€', '\v', '\u00a0', ' ', '\n', '\r\n', 'A', '/', '-', '_'];
  const input = fc
    .record({
      bytes: fc.uint8Array({ maxLength: 200 }),
      prefix: fc.constantFrom('', 'data:image/png;base64,', 'DATA:;base64,', ' data:x;a=b;base64,', 'data:image/png,', '\t'),
      edits: fc.array(fc.record({ at: fc.nat(), text: fc.constantFrom(...EDITS), replace: fc.boolean() }), { maxLength: 3 }),
      cut: fc.nat({ max: 3 }),
      suffix: fc.constantFrom('', '\n', '  ', '\ufeff', '='),
    })
    .map(({ bytes, prefix, edits, cut, suffix }) => {
      let s = Buffer.from(bytes).toString('base64');
      s = s.slice(0, s.length - (cut === 3 ? 1 : 0));
      for (const e of edits) {
        const at = s.length ? e.at % s.length : 0;
        s = s.slice(0, at) + e.text + s.slice(at + (e.replace ? 1 : 0));
      }
      return prefix + s + suffix;
    });
  /** The input's UTF-8 bytes cut into parts at `cuts` (as a body's chunks come). */
  const inParts = (s: string, cuts: readonly number[]): Uint8Array[] => {
    const b = new TextEncoder().encode(s);
    const at = [...new Set(cuts.map((c) => c % (b.length + 1)))].sort((x, y) => x - y);
    return [...at, b.length].map((end, i) => b.subarray(i ? at[i - 1]! : 0, end));
  };

  test('the string and its bytes in parts decode to the oracle\'s bytes, or are refused alike', () => {
    fc.assert(
      fc.property(input, fc.array(fc.nat(), { maxLength: 4 }), (text, cuts) => {
        const expected = oracle(text);
        const results = [() => decodeBase64Input(text), () => decodeBase64Input(inParts(text, cuts))].map((run) => {
          try {
            return run();
          } catch (e) {
            assert.ok(e instanceof Base64Error, String(e));
            return e.message;
          }
        });
        if (expected) for (const r of results) assert.deepEqual(r, expected, JSON.stringify(text));
        else {
          assert.equal(typeof results[0], 'string', `accepted ${JSON.stringify(text)}`);
          assert.equal(results[1], results[0], JSON.stringify(text));
        }
      }),
      { ...RUNS, numRuns: 3000 },
    );
  });
});

function popcount(x: number): number {
  let c = 0;
  for (; x; x &= x - 1) c++;
  return c;
}
