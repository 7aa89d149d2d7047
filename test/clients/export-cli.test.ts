import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Manifest } from '../../src/client/exporter.js';
import { periods } from '../../src/client/exporter.js';
import { QUERY_KEY } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { CLI_MAIN } from '../helpers/built.js';

/** Issue 18: `mds export` against a running service over HTTP: files, manifest, resume. */

const run = promisify(execFile);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-export-'));

async function mds(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [CLI_MAIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    return { code: 0, ...r };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

test('periods: months and years, clipped to the first and last date', () => {
  assert.deepEqual(periods('2024-01-15', '2024-03-02', 'month'), [
    { name: '2024-01', from: '2024-01-15', to: '2024-01-31' },
    { name: '2024-02', from: '2024-02-01', to: '2024-02-29' },
    { name: '2024-03', from: '2024-03-01', to: '2024-03-02' },
  ]);
  assert.deepEqual(
    periods('2023-12-31', '2024-01-01', 'year').map((p) => [p.name, p.from, p.to]),
    [
      ['2023', '2023-12-31', '2023-12-31'],
      ['2024', '2024-01-01', '2024-01-01'],
    ],
  );
});

describe('mds export (a running service, sqlite)', () => {
  let server: ServerProcess;
  before(async () => {
    const url = `sqlite:${path.join(tmp, 'db.sqlite')}`;
    const seeded = await mds([
      'seed',
      '--demo',
      '--database-url',
      url,
      '--end',
      '2025-06-30',
      '--days',
      '45',
    ]);
    assert.equal(seeded.code, 0, seeded.stderr);
    server = await startServer({ databaseUrl: url });
  });
  after(async () => {
    await server?.kill('SIGTERM');
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const total = async (query: string): Promise<number> => {
    const res = await fetch(`${server.base}/api/v1/etf/kline?limit=1${query}`, {
      headers: { 'q-api-key': QUERY_KEY },
    });
    return ((await res.json()) as { meta: { total: number } }).meta.total;
  };

  test('one file per month, a manifest with rows and SHA-256 per file; a re-run skips complete files', async () => {
    const out = path.join(tmp, 'kline');
    const args = ['export', '--dataset', 'etf_daily', '--out', out, '--url', server.base, '--key', QUERY_KEY];
    const first = await mds(args);
    assert.equal(first.code, 0, first.stderr);
    const m = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as Manifest;
    assert.equal(m.dataset, 'etf_daily');
    assert.equal(m.format, 'parquet');
    assert.ok(m.version !== null && m.version > 0);
    assert.deepEqual(m.schema.slice(0, 2), [
      { name: 'code', type: 'string', nullable: false },
      { name: 'date', type: 'date', nullable: false },
    ]);
    assert.deepEqual(
      m.files.map((f) => f.path),
      ['etf_daily-2025-04.parquet', 'etf_daily-2025-05.parquet', 'etf_daily-2025-06.parquet'],
    );
    for (const f of m.files) {
      assert.equal(sha(path.join(out, f.path)), f.sha256, f.path);
      assert.equal(fs.statSync(path.join(out, f.path)).size, f.bytes);
      assert.equal(f.rows, await total(`&date_from=${f.date_from}&date_to=${f.date_to}`), f.path);
    }
    assert.equal(m.rows, await total(''));
    assert.match(first.stdout, /3 written, 0 already complete/);

    const again = await mds(args);
    assert.match(again.stdout, /0 written, 3 already complete/);
    // A damaged file is fetched again; the others are kept.
    fs.appendFileSync(path.join(out, 'etf_daily-2025-05.parquet'), 'x');
    const repaired = await mds(args);
    assert.match(repaired.stdout, /1 written, 2 already complete/);
    assert.equal(sha(path.join(out, 'etf_daily-2025-05.parquet')), m.files[1]?.sha256);
  });

  test('a dataset without a date field is one file; arrow and filters pass through', async () => {
    /** Runs `mds export` into a new directory of tmp; its manifest. */
    const exportTo = async (dir: string, args: string[]): Promise<Manifest> => {
      const out = path.join(tmp, dir);
      const r = await mds(['export', ...args, '--out', out, '--url', server.base, '--key', QUERY_KEY]);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as Manifest;
    };
    const m = await exportTo('basic', ['--dataset', 'etf_basic', '--format', 'arrow']);
    assert.deepEqual(
      m.files.map((f) => [f.path, f.partition]),
      [['etf_basic.arrows', 'all']],
    );
    assert.ok((m.files[0]?.rows ?? 0) > 0);
    const my = await exportTo('year', [
      '--dataset',
      'etf_daily',
      '--partition',
      'year',
      '--date-from',
      '2025-06-01',
    ]);
    assert.deepEqual(
      my.files.map((f) => [f.path, f.date_from]),
      [['etf_daily-2025.parquet', '2025-06-02']],
    );
    assert.equal(my.rows, await total('&date_from=2025-06-01'));
  });

  test('errors: a bad key names its code; a bad date is refused before any request', async () => {
    const x = ['--out', path.join(tmp, 'x')];
    const bad = await mds([
      'export',
      '--dataset',
      'etf_daily',
      ...x,
      '--url',
      server.base,
      '--key',
      'wrong-key-0123456789',
    ]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /HTTP 401 code 4012/);
    const date = await mds([
      'export',
      '--dataset',
      'etf_daily',
      ...x,
      '--key',
      'k',
      '--date-from',
      '2025-02-30',
    ]);
    assert.equal(date.code, 1);
    assert.match(date.stderr, /--date-from must be a real date/);
    const unknown = await mds(['export', '--dataset', 'nope', '--out', path.join(tmp, 'x'), '--key', 'k']);
    assert.match(unknown.stderr, /unknown dataset "nope"/);
  });
});
