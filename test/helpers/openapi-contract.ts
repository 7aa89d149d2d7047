import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import type { Json } from './harness.js';

// The published /openapi.json as an outsider reads it: a standard JSON Schema validator (Ajv,
// draft 2020-12, ajv-formats) over the document's own schemas, and the answer of a request
// checked against its operation (test/http/openapi-contract.test.ts,
// test/http/parameter-sweep.test.ts).

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export type Doc = {
  paths: Record<string, Record<string, Op>>;
  components: { schemas: Record<string, Json> };
};
export type Op = {
  operationId: string;
  description?: string;
  security?: unknown[];
  parameters?: {
    name: string;
    in: string;
    schema: Json;
    description?: string;
    example?: string;
    'x-mds-filter'?: string;
    'x-mds-field'?: string;
  }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
  'x-mds-event-schema'?: Json;
  'x-mds-exports'?: Record<string, string>;
};

export class Contract {
  readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly cache = new Map<string, ValidateFunction>();
  /** operationId → statuses seen. */
  readonly seen = new Map<string, Set<string>>();

  constructor(readonly doc: Doc) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'mds:doc', components: doc.components }, 'mds');
  }

  /** The operation answering `method url`, and its path template. */
  find(method: string, url: string): { op: Op; template: string } {
    const p = url.split('?')[0] as string;
    // Concrete paths before templated ones, as OpenAPI matches them (/quality/stock_minute).
    const paths = Object.entries(this.doc.paths).sort(
      ([a], [b]) => Number(a.includes('{')) - Number(b.includes('{')),
    );
    for (const [template, item] of paths) {
      const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      const op = item[method.toLowerCase()];
      if (op && re.test(p)) return { op, template };
    }
    assert.fail(`${method} ${p} is not in /openapi.json`);
  }

  validator(pointer: string, schema: Json): ValidateFunction {
    let v = this.cache.get(pointer);
    if (!v) {
      // Refs point into the document's components, registered once as schema `mds`.
      v = this.ajv.compile(
        JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"mds#/components/')),
      );
      this.cache.set(pointer, v);
    }
    return v;
  }

  validate(pointer: string, schema: Json, value: unknown, what: string): void {
    const v = this.validator(pointer, schema);
    assert.ok(
      v(value),
      `${what} does not match ${pointer}: ${this.ajv.errorsText(v.errors)}\n${JSON.stringify(value).slice(0, 600)}`,
    );
  }

  /** Checks a request body (when JSON) and its answer against the document. */
  check(method: string, url: string, res: LightMyRequestResponse, body?: unknown): void {
    const { op, template } = this.find(method, url);
    const what = `${method} ${url} → ${res.statusCode}`;
    if (body !== undefined && res.statusCode < 300) {
      const s = op.requestBody?.content['application/json']?.schema;
      assert.ok(s, `${what}: no request body documented`);
      this.validate(`${template} ${method} body`, s, body, `request of ${what}`);
    }
    const status = String(res.statusCode);
    const response = op.responses[status];
    assert.ok(response, `${what}: status not documented (${Object.keys(op.responses).join(', ')})`);
    (this.seen.get(op.operationId) ?? this.seen.set(op.operationId, new Set()).get(op.operationId))?.add(
      status,
    );
    const type = String(res.headers['content-type'] ?? '').split(';')[0] as string;
    if (!type) {
      assert.equal(response.content, undefined, `${what}: answer without a body, but one is documented`);
      return;
    }
    // An export's media type is named by the operation's x-mds-exports (200 only).
    const exported =
      status === '200' && Object.values(op['x-mds-exports'] ?? {}).some((m) => m.startsWith(type));
    if (exported) return;
    const media = response.content?.[type];
    assert.ok(
      media,
      `${what}: content type ${type} not documented (${Object.keys(response.content ?? {}).join(', ')})`,
    );
    if (type === 'application/json' && media.schema) {
      this.validate(`${template} ${method} ${status}`, media.schema, res.json(), `answer of ${what}`);
    }
  }
}
