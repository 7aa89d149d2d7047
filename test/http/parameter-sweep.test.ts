// Every documented parameter of every operation, given the values a client sends by mistake or
// by malice: each answer is a status the document lists for that operation, with the body it
// documents (test/helpers/openapi-contract.ts), never a 5xx; nothing stored changes; the service
// answers /health as before. Read from /openapi.json, so an operation or a parameter added later
// is swept with no line here. On every backend: PostgreSQL refuses text SQLite takes (a NUL).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMIN_TOKEN,
  backends,
  INGEST_KEY,
  push,
  QUERY_KEY,
  startApp,
  type Harness,
} from '../helpers/harness.js';
import { batch, etfBar } from '../helpers/batches.js';
import { Contract, type Doc, type Op } from '../helpers/openapi-contract.js';

/** Values as they appear in the URL (already percent-encoded where they need it). */
const HOSTILE: readonly { name: string; raw: string; inPath?: false }[] = [
  { name: 'a NUL inside', raw: 'a%00b' },
  { name: 'invalid UTF-8 (a lone surrogate)', raw: '%ED%A0%80' },
  { name: '5,000 characters', raw: 'x'.repeat(5000) },
  { name: 'quote, LIKE wildcards, backslash', raw: encodeURIComponent("'%_\\") },
  { name: 'a number too large for a double', raw: '1e999' },
  { name: 'a negative number', raw: '-1' },
  { name: 'a fraction', raw: '1.5' },
  { name: 'a date that does not exist', raw: '2024-02-30' },
  { name: 'empty', raw: '', inPath: false },
];
const ALL = [
  ...HOSTILE.map((v) => ({ ...v, twice: false })),
  // The same parameter twice (a framework hands the handler an array).
  { name: 'given twice', raw: 'a', twice: true },
];
/** What every parameter of every operation gets, however many others share its code. */
const EVERY_TIME = ALL.slice(0, 1);

/**
 * Operations of one family (the same parameters besides the dataset's filters: daily bars, minute
 * bars, revisions, reports...) are served by the same code, so a parameter of the same method,
 * name and schema there gets every value once, on the first operation that has it, and a NUL on
 * the others: about 3,600 requests a backend rather than 10,900, each parameter of each operation
 * still asked.
 */
function sweepKey(s: Sweep, param: NonNullable<Op['parameters']>[number]): string {
  const family = (s.op.parameters ?? []).filter((p) => !p['x-mds-filter']).map((p) => p.name);
  return JSON.stringify([s.method, family, param.in, param.name, param.schema, param['x-mds-filter']]);
}

const KEYS: Record<string, Record<string, string>> = {
  QueryKey: { 'q-api-key': QUERY_KEY },
  IngestKey: { 'up-api-key': INGEST_KEY },
  AdminToken: { authorization: `Bearer ${ADMIN_TOKEN}` },
};

interface Sweep {
  method: string;
  op: Op;
  /** The operation's URL with every path parameter at its documented example. */
  url(path?: Record<string, string>, query?: string): string;
}

function sweeps(doc: Doc): Sweep[] {
  const out: Sweep[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!(op.parameters ?? []).length) continue;
      out.push({
        method: method.toUpperCase(),
        op,
        url(path = {}, query) {
          const p = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
            const doc = op.parameters?.find((x) => x.in === 'path' && x.name === name);
            return path[name] ?? encodeURIComponent(String(doc?.example ?? 'x'));
          });
          return query === undefined ? p : `${p}?${query}`;
        },
      });
    }
  }
  return out;
}

for (const backend of await backends()) {
  describe(`every parameter of every operation, hostile values (${backend})`, () => {
    let h: Harness;
    let doc: Doc;
    let contract: Contract;
    const admin = KEYS.AdminToken as Record<string, string>;
    const stored = async () =>
      Promise.all(
        ['/admin/api/coverage', '/admin/api/batches?limit=1000', '/admin/api/keys'].map(
          async (url) => (await h.app.inject({ method: 'GET', url, headers: admin })).body,
        ),
      );

    before(async () => {
      h = await startApp(backend);
      doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
      contract = new Contract(doc);
      // Some rows, so that a value that passes its check meets data.
      const res = await push(h.app, batch('etf_daily', [etfBar('510300', '2024-01-02')]));
      assert.equal(res.statusCode, 200, res.body);
    });
    after(async () => h?.close());

    it('each answer is documented for its operation, never a 5xx; nothing stored changes', async (t) => {
      const before = await stored();
      const health = (await h.app.inject({ method: 'GET', url: '/health' })).json() as unknown;
      const failures: string[] = [];
      const covered = new Set<string>();
      let requests = 0;
      for (const s of sweeps(doc)) {
        const scheme = Object.keys((s.op.security?.[0] ?? {}) as object)[0];
        const headers = {
          ...(scheme ? KEYS[scheme] : {}),
          ...(s.method === 'PATCH' || s.method === 'POST' ? { 'content-type': 'application/json' } : {}),
        };
        // A stream's answer ends only when the client leaves: its values must all be refused
        // (an empty value is an absent one, which opens the stream).
        const streaming = s.op.responses['200']?.content?.['text/event-stream'] !== undefined;
        for (const param of s.op.parameters ?? []) {
          const key = sweepKey(s, param);
          const values = (covered.has(key) ? EVERY_TIME : ALL)
            .filter((v) => param.in === 'query' || (v.inPath !== false && !v.twice))
            .filter((v) => !(streaming && v.raw === ''));
          covered.add(key);
          for (const v of values) {
            const url =
              param.in === 'path'
                ? s.url({ [param.name]: v.raw })
                : s.url({}, v.twice ? `${param.name}=a&${param.name}=b` : `${param.name}=${v.raw}`);
            const what = `${s.method} ${s.op.operationId} ${param.name} = ${v.name}`;
            requests++;
            const res = await h.app.inject({
              method: s.method as 'GET',
              url,
              headers,
              ...(s.method === 'PATCH' || s.method === 'POST' ? { payload: '{}' } : {}),
            });
            if (res.statusCode >= 500) {
              failures.push(`${what} → ${res.statusCode} ${res.body.slice(0, 200)}`);
              continue;
            }
            try {
              contract.check(s.method, url, res);
            } catch (err) {
              failures.push(`${what}: ${(err as Error).message.slice(0, 300)}`);
            }
          }
        }
      }
      t.diagnostic(`${requests} requests`);
      assert.ok(requests > 1000, `${requests} requests: the document lists its parameters`);
      assert.deepEqual(failures, [], `${failures.length} of ${requests} requests`);
      assert.deepEqual(await stored(), before, 'no row, batch or key changed');
      assert.deepEqual((await h.app.inject({ method: 'GET', url: '/health' })).json(), health);
    });
  });
}
