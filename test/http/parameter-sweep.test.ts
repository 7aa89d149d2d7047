// Every documented parameter of every operation, and every property of the admin API's bodies,
// given the values a client sends by mistake or by malice: each answer is a status the document
// lists for that operation, with the body it documents (test/helpers/openapi-contract.ts), never
// a 5xx; a body it accepts is one the document accepts; text no database stores as given (a NUL,
// an unpaired surrogate) is never accepted; nothing stored changes; /health answers as before.
// Read from /openapi.json, so an operation, parameter or body property added later is swept with
// no line here. On every backend: PostgreSQL refuses text SQLite takes (a NUL).
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
import type { LightMyRequestResponse } from 'fastify';
import { Contract, type Doc, type Op } from '../helpers/openapi-contract.js';

/** Values as they appear in the URL (already percent-encoded where they need it). */
const HOSTILE: readonly { name: string; raw: string; inPath?: false; unstorable?: true }[] = [
  { name: 'a NUL inside', raw: 'a%00b', unstorable: true },
  { name: 'invalid UTF-8 (a lone surrogate)', raw: '%ED%A0%80', unstorable: true },
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

/** Text no database stores as given (docs/reliability.md): never accepted, in any place. */
const UNSTORABLE = ['"a\\u0000b"', '"a\\ud800"'];
/** JSON texts for a body property (sent as written: `1e999` parses to Infinity, `\ud800` stays lone). */
const BODY_VALUES: readonly string[] = [
  ...UNSTORABLE,
  `"${'x'.repeat(5000)}"`,
  JSON.stringify("'%_\\"),
  '1e999',
  '-1',
  '1.5',
  '0',
  '"2024-02-30"',
  '""',
  'null',
  'true',
  '[]',
  '{}',
];

type Schema = Record<string, unknown>;

/** A schema with its `$ref` (into the document's components) followed. */
function resolved(doc: Doc, s: Schema): Schema {
  const ref = s.$ref;
  return typeof ref === 'string'
    ? resolved(doc, doc.components.schemas[ref.split('/').pop() ?? ''] as Schema)
    : s;
}

/** The smallest value a schema accepts as far as this needs: required properties only. */
function sample(doc: Doc, raw: Schema): unknown {
  const s = resolved(doc, raw);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches?.[0]) return sample(doc, branches[0]);
  switch (s.type) {
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return [];
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = (s.required ?? []) as string[];
      return Object.fromEntries(required.map((k) => [k, sample(doc, props[k] as Schema)]));
    }
    default:
      return 'x';
  }
}

const KEYS: Record<string, Record<string, string>> = {
  QueryKey: { 'q-api-key': QUERY_KEY },
  IngestKey: { 'up-api-key': INGEST_KEY },
  AdminToken: { authorization: `Bearer ${ADMIN_TOKEN}` },
};

interface Sweep {
  method: string;
  op: Op;
  /** Its key or token, and a JSON content type where it takes a body. */
  headers: Record<string, string>;
  /** POST and PATCH: sent `{}` when a parameter is what is swept. */
  takesBody: boolean;
  /** The operation's URL with every path parameter at its documented example. */
  url(path?: Record<string, string>, query?: string): string;
}

function sweeps(doc: Doc): Sweep[] {
  const out: Sweep[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const scheme = Object.keys((op.security?.[0] ?? {}) as object)[0];
      const takesBody = method === 'post' || method === 'patch';
      out.push({
        method: method.toUpperCase(),
        op,
        headers: {
          ...(scheme ? KEYS[scheme] : {}),
          ...(takesBody ? { 'content-type': 'application/json' } : {}),
        },
        takesBody,
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

    /** One request of a test; what is wrong with its answer goes to the test's log. */
    const ask = async (
      log: { failures: string[]; requests: number },
      s: Sweep,
      what: string,
      req: { url: string; payload?: string; unstorable: boolean; checkBody?: true },
    ): Promise<LightMyRequestResponse> => {
      log.requests++;
      const res = await h.app.inject({
        method: s.method as 'GET',
        url: req.url,
        headers: s.headers,
        ...(req.payload === undefined ? {} : { payload: req.payload }),
      });
      if (res.statusCode >= 500 || (req.unstorable && res.statusCode < 300)) {
        log.failures.push(`${what} → ${res.statusCode} ${res.body.slice(0, 200)}`);
        return res;
      }
      try {
        // A body the service accepts must be one the document accepts too.
        const body = req.checkBody ? (JSON.parse(req.payload ?? '') as unknown) : undefined;
        contract.check(s.method, req.url, res, body);
      } catch (err) {
        log.failures.push(`${what}: ${(err as Error).message.slice(0, 300)}`);
      }
      return res;
    };

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
      const log = { failures: [] as string[], requests: 0 };
      const covered = new Set<string>();
      for (const s of sweeps(doc)) {
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
            const payload = s.takesBody ? '{}' : undefined;
            await ask(log, s, what, {
              url,
              unstorable: v.unstorable === true,
              ...(payload ? { payload } : {}),
            });
          }
        }
      }
      const { failures, requests } = log;
      t.diagnostic(`${requests} requests`);
      assert.ok(requests > 1000, `${requests} requests: the document lists its parameters`);
      assert.deepEqual(failures, [], `${failures.length} of ${requests} requests`);
      assert.deepEqual(await stored(), before, 'no row, batch or key changed');
      assert.deepEqual((await h.app.inject({ method: 'GET', url: '/health' })).json(), health);
    });

    // Bodies that are one object (the admin API's): each property in turn, the others at their
    // smallest valid value, so that the property itself is what the service judges. The ingest
    // batch and MCP's JSON-RPC messages (unions) have corpora of their own (bad-input, mcp).
    it('each property of each object body, hostile JSON: documented answers, never a 5xx', async (t) => {
      const before = await stored();
      const log = { failures: [] as string[], requests: 0 };
      const created: string[] = [];
      for (const s of sweeps(doc)) {
        const raw = s.op.requestBody?.content['application/json']?.schema;
        const schema = raw === undefined ? undefined : resolved(doc, raw);
        if (schema?.type !== 'object') continue;
        const base = sample(doc, schema) as Record<string, unknown>;
        for (const prop of Object.keys(schema.properties as object)) {
          for (const value of BODY_VALUES) {
            const others = Object.entries(base).filter(([k]) => k !== prop);
            const payload = `{${[...others.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`), `${JSON.stringify(prop)}:${value}`].join(',')}}`;
            const what = `${s.method} ${s.op.operationId} body ${prop} = ${value.slice(0, 20)}`;
            const unstorable = UNSTORABLE.includes(value);
            const res = await ask(log, s, what, { url: s.url(), payload, unstorable, checkBody: true });
            if (res.statusCode === 201)
              created.push(String((res.json() as { data: { id: string } }).data.id));
          }
        }
      }
      const { failures, requests } = log;
      t.diagnostic(`${requests} requests, ${created.length} keys created`);
      assert.ok(
        requests >= 2 * BODY_VALUES.length,
        `${requests} requests: the document lists the admin bodies`,
      );
      assert.deepEqual(failures, [], `${failures.length} of ${requests} requests`);
      const [coverage, batches, keys] = await stored();
      assert.deepEqual([coverage, batches], before.slice(0, 2), 'no row or batch changed');
      const ids = (JSON.parse(keys as string) as { data: { id: string }[] }).data.map((k) => k.id);
      const was = (JSON.parse(before[2] as string) as { data: { id: string }[] }).data.map((k) => k.id);
      assert.deepEqual(
        ids.sort(),
        [...was, ...created].sort(),
        'the keys are those before and those answered 201',
      );
    });
  });
}
