// README.md: every curl line of the quick start and of "Querying", run as written (the address
// and the key replaced) against a listening service seeded with the demo data, which the README
// says each of them returns rows from.
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { QUERY_KEY, type Harness } from '../helpers/harness.js';
import { listeningDemo } from '../helpers/demo-seed.js';
import { ROOT } from '../helpers/repo-root.js';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** Each `curl -s 'localhost:8080/…'` line's URL, and the file it writes to (`> file`), if any. */
const CURLS = [...README.matchAll(/^curl -s '(localhost:8080\/[^']+)' -H "[^"]+"(?: > (\S+))?/gm)].map(
  (m) => ({
    url: m[1] as string,
    file: m[2] ?? null,
  }),
);

describe("README.md's curl examples, on the demo data", () => {
  let h: Harness;
  let base: string;
  before(async () => {
    ({ h, base } = await listeningDemo());
    base = base.replace('http://', '');
  });
  after(async () => h?.close());

  it('the README has its examples: JSON of six areas, a CSV and a Parquet export', () => {
    assert.ok(CURLS.length >= 9, `${CURLS.length} curl lines`);
    assert.deepEqual(
      CURLS.filter((c) => c.file !== null).map((c) => c.file),
      ['510300.csv', 'etf_daily.parquet'],
    );
  });

  it('each returns rows', async () => {
    for (const { url, file } of CURLS) {
      const res = await fetch(`http://${url.replace('localhost:8080', base)}`, {
        headers: { 'Q-API-KEY': QUERY_KEY },
      });
      assert.equal(res.status, 200, url);
      if (file?.endsWith('.csv')) {
        const lines = (await res.text()).trim().split('\n');
        assert.match(lines[0] ?? '', /^code,date,/, url);
        assert.ok(lines.length > 200, `${url}: ${lines.length} lines`);
      } else if (file?.endsWith('.parquet')) {
        const bytes = Buffer.from(await res.arrayBuffer());
        assert.equal(bytes.subarray(0, 4).toString(), 'PAR1', url);
        assert.ok(bytes.length > 10_000, `${url}: ${bytes.length} bytes`);
      } else {
        const body = (await res.json()) as { code: number; data: unknown[] };
        assert.equal(body.code, 0, url);
        assert.ok(body.data.length > 0, `${url} returns rows`);
      }
    }
  });
});
