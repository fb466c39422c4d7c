import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import ts from 'typescript';
import { RENDER_PARAMS_FILE, renderParamsSource, updateReadme } from '../scripts/readme-params.js';
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

it('RenderParams carries each parameter\'s doc comment to an editor, from PARAMS and current', () => {
  assert.equal(readFileSync(new URL(`../${RENDER_PARAMS_FILE}`, import.meta.url), 'utf8'), renderParamsSource(), 'run npm run docs');
  // What an editor's hover reads: the doc comment of RenderInput's members, as the package exports it.
  const file = fileURLToPath(new URL('../src/core/index.ts', import.meta.url));
  const program = ts.createProgram([file], { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true });
  const checker = program.getTypeChecker();
  const entry = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  const input = checker.getExportsOfModule(entry).find((s) => s.name === 'RenderInput')!;
  const type = checker.getDeclaredTypeOfSymbol(input.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(input) : input);
  for (const d of PARAMS as readonly ParamDef[]) {
    const member = type.getProperty(d.name);
    assert.ok(member, d.name);
    const doc = ts.displayPartsToString(member.getDocumentationComment(checker));
    assert.ok(doc.startsWith(d.description), `${d.name}: ${doc.slice(0, 80)}`);
    assert.match(doc, /; default /, d.name);
  }
});
