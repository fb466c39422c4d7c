import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { updateReadme } from '../scripts/readme-params.js';
import { PARAMS, kebabName, type ParamDef } from '../src/core/params/definitions.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

it('README parameter table is generated from PARAMS and current', () => {
  assert.equal(readme, updateReadme(readme), 'run npm run docs');
  for (const d of PARAMS as readonly ParamDef[]) assert.ok(readme.includes(d.cliFlag ?? `--${kebabName(d.name)}`), d.name);
});

it('README lists every value the package exports, each with its doc comment', () => {
  const table = readme.slice(readme.indexOf('<!-- exports:start'), readme.indexOf('<!-- exports:end'));
  for (const name of ['render', 'formatResult', 'FrameRenderer', 'TemporalFilter', 'decodeCompact', 'decodeImage', 'probeImage']) assert.ok(table.includes(`| \`${name}\` |`), name);
  assert.doesNotMatch(table, /\(undocumented\)/, 'every export has a doc comment');
});

it('README names the two set-up commands and .ci/run runs the test one', () => {
  assert.match(readme, /npm ci && npm start/);
  assert.match(readme, /npm test/);
  assert.match(readFileSync(new URL('../.ci/run', import.meta.url), 'utf8'), /^npm test$/m);
});
