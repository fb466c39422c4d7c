import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'parse5';
import { XMLValidator } from 'fast-xml-parser';
import { CHARSETS, FORMATS } from '../src/core/params/definitions.js';
import { render } from '../src/core/render.js';
import { formatResult } from '../src/core/format/index.js';
import { scene, lines } from './helpers/images.js';

/**
 * Golden outputs on small generated images: any change to the renderer's output shows up here
 * as a diff. Goldens are reviewed artefacts: a missing one fails (it is never written silently);
 * regenerate deliberately with UPDATE_GOLDEN=1, review the diff and commit it on its own with
 * the reason in the message.
 */
const DIR = new URL('./golden/', import.meta.url);
const update = process.env.UPDATE_GOLDEN === '1';

function golden(name: string, actual: string | Uint8Array): void {
  const file = new URL(name, DIR);
  if (update) {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file)) assert.fail(`golden file ${name} is missing: run UPDATE_GOLDEN=1 on this test, review and commit it`);
  if (typeof actual === 'string') assert.equal(actual, readFileSync(file, 'utf8'), `${name} differs from its golden copy (UPDATE_GOLDEN=1 to accept)`);
  else assert.ok(Buffer.from(actual).equals(readFileSync(file)), `${name} differs from its golden copy (UPDATE_GOLDEN=1 to accept)`);
}

const photo = scene(192, 144, 11);
const art = lines(160, 160);

describe('golden outputs', () => {
  for (const charset of CHARSETS) {
    it(`charset ${charset}`, () => {
      golden(`charset-${charset}.txt`, formatResult(render(photo, { columns: 32, charset }), 'text').body);
      golden(`charset-${charset}-lines.txt`, formatResult(render(art, { columns: 24, charset, edges: charset !== 'dots' }), 'text').body);
    });
  }
  for (const format of FORMATS) {
    it(`format ${format}`, () => {
      const r = render(photo, { columns: 16, format, color: true });
      const { body } = formatResult(r);
      const ext = format === 'json-compact' ? 'compact.json' : format === 'ansi' ? 'ans' : format === 'text' ? 'txt' : format;
      golden(`format.${ext}`, body);
      if (typeof body !== 'string') return; // png: its bytes are the golden
      if (format === 'html') {
        const errors: string[] = [];
        parse(body, { onParseError: (e) => errors.push(e.code) });
        assert.deepEqual(errors, [], 'html parses without errors');
        assert.ok(!/<script/i.test(body));
      }
      if (format === 'svg') {
        assert.equal(XMLValidator.validate(body), true, 'svg is well-formed XML');
        assert.match(body, /<svg[^>]+viewBox="0 0 96 \d+"/);
      }
      if (format === 'json' || format === 'json-compact') JSON.parse(body);
    });
  }
});
