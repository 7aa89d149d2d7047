// Issue 26: the dashboard's browser modules are type-checked (src/dashboard/tsconfig.json, run by
// `npm run typecheck`), so a change that breaks one fails the checks, not only the Chromium suite.
// This holds that the check covers every module and that it fails on what it is there to find.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/dist-fresh.js';

const CONFIG = path.join(ROOT, 'src', 'dashboard', 'tsconfig.json');
const ASSETS = path.join(ROOT, 'src', 'dashboard', 'assets');

function parsedConfig(): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    CONFIG,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) =>
        assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    },
  );
  assert.ok(parsed, 'the dashboard config parses');
  assert.deepEqual(parsed.errors, []);
  return parsed;
}

it('npm run typecheck runs the dashboard config over every module of assets/ (vendor/ aside)', () => {
  const scripts = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  assert.match(scripts['typecheck'] ?? '', /tsc -p src\/dashboard\/tsconfig\.json(?!\S)/);
  const modules = fs
    .readdirSync(ASSETS)
    .filter((f) => f.endsWith('.js'))
    .map((f) => path.join(ASSETS, f));
  assert.ok(modules.length >= 8, `the dashboard's modules: ${modules.join(', ')}`);
  const parsed = parsedConfig();
  assert.deepEqual([...parsed.fileNames].map((f) => path.resolve(f)).sort(), modules.sort());
  assert.equal(parsed.options.checkJs, true);
  assert.equal(parsed.options.strict, true);
});

it('an import of a name its module does not export, and a field no answer has, fail the check', () => {
  // Each edit as an engineer could make it; the files on disk are not touched.
  const edits = new Map([
    // The mistake of issue 26: a function imported from the wrong module.
    [
      path.join(ASSETS, 'coverage-view.js'),
      ["import { reloader } from './api.js';", "import { reloader } from './dom.js';"],
    ],
    [path.join(ASSETS, 'keys-view.js'), ['limitText(k.rate_per_minute,', 'limitText(k.rate_per_minut,']],
  ]);
  const parsed = parsedConfig();
  const host = ts.createCompilerHost(parsed.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => {
    const text = readFile(file);
    const edit = edits.get(path.resolve(file));
    if (text === undefined || !edit) return text;
    const [from, to] = edit as [string, string];
    assert.ok(text.includes(from), `${file} still holds ${from}`);
    return text.replace(from, to);
  };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host });
  const found = ts.getPreEmitDiagnostics(program).map((d) => ({
    file: path.basename(d.file?.fileName ?? '?'),
    code: d.code,
    message: ts.flattenDiagnosticMessageText(d.messageText, ' '),
  }));
  // 2305: module has no exported member; 2551: property does not exist (did you mean …).
  assert.deepEqual(
    found.map(({ file, code }) => ({ file, code })).sort((a, b) => a.file.localeCompare(b.file)),
    [
      { file: 'coverage-view.js', code: 2305 },
      { file: 'keys-view.js', code: 2551 },
    ],
    JSON.stringify(found, null, 2),
  );
});
