/**
 * Generates `types.generated.ts` (row and parameter types of every query endpoint) from the
 * service's OpenAPI document, so the typed client is derived from what the server publishes.
 * A test regenerates it from a live `/openapi.json` and fails when the committed file drifts.
 *
 * Regenerate: `npx tsx src/client/generate-types.ts` (writes src/client/types.generated.ts).
 */

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const pascal = (name: string): string =>
  name
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');

const literal = (v: unknown): string => (v === null ? 'null' : JSON.stringify(v));

/** A JSON Schema (as the service writes them) as a TypeScript type. */
function tsType(schema: Obj): string {
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type)];
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map(literal).join(' | ');
  const base = types.map((t) =>
    t === 'integer' || t === 'number'
      ? 'number'
      : t === 'null'
        ? 'null'
        : t === 'boolean'
          ? 'boolean'
          : 'string',
  );
  return [...new Set(base)].join(' | ');
}

function comment(schema: Obj): string {
  const parts: string[] = [];
  if (schema.format === 'date') parts.push('YYYY-MM-DD');
  if (schema.format === 'date-time') parts.push('ISO 8601 UTC timestamp');
  if (typeof schema.description === 'string') parts.push(schema.description);
  return parts.length ? `  /** ${parts.join('; ').replace(/\*\//g, '* /')} */\n` : '';
}

interface Endpoint {
  dataset: string;
  path: string;
  row: Obj;
  params: Obj[];
}

function endpoints(doc: Obj): Endpoint[] {
  const out: Endpoint[] = [];
  const schemas = ((doc.components as Obj | undefined)?.schemas ?? {}) as Obj;
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Obj)) {
    const get = isObj(item) ? item.get : undefined;
    if (!isObj(get) || typeof get.operationId !== 'string' || !get.operationId.startsWith('query_')) continue;
    const dataset = get.operationId.slice('query_'.length);
    const row = schemas[`${dataset}_row`];
    if (!isObj(row)) throw new Error(`OpenAPI: no schema ${dataset}_row`);
    out.push({ dataset, path, row, params: (get.parameters ?? []) as Obj[] });
  }
  return out;
}

/** The source text of types.generated.ts for an OpenAPI document (unformatted). */
export function clientTypesSource(doc: Obj): string {
  const eps = endpoints(doc);
  let src =
    '// Generated from the OpenAPI document by src/client/generate-types.ts. Do not edit:\n' +
    '// run `npx tsx src/client/generate-types.ts` after changing the catalog.\n\n';
  for (const e of eps) {
    const T = pascal(e.dataset);
    const props = (e.row.properties ?? {}) as Record<string, Obj>;
    src += `/** A row of ${e.path} (dataset ${e.dataset}). */\nexport interface ${T}Row {\n`;
    for (const [name, s] of Object.entries(props)) src += `${comment(s)}  ${name}: ${tsType(s)};\n`;
    src += '}\n\n';
    src += `/** Filters and options of ${e.path}. */\nexport interface ${T}Params {\n`;
    for (const p of e.params) {
      const name = String(p.name);
      const given = (p.schema ?? {}) as Obj;
      // An exact filter: one value or several (anyOf [value, array of values]).
      const many = Array.isArray(given.anyOf);
      const s = many ? ((given.anyOf as Obj[])[0] ?? {}) : given;
      let type: string;
      if (name === 'fields') type = `readonly (keyof ${T}Row)[]`;
      else if (name === 'sort') type = `keyof ${T}Row`;
      else if (name === 'format')
        continue; // exports go through exportRows()
      else if (Array.isArray(s.enum)) type = (s.enum as unknown[]).map(literal).join(' | ');
      else if (s.type === 'integer' || s.type === 'number') type = 'number';
      else if (s.format === 'date-time') type = 'string | Date';
      else if (
        s.format === 'date' ||
        s.pattern !== undefined ||
        name === 'cursor' ||
        name === 'adjust_source' ||
        p['x-mds-filter'] === 'like' ||
        p['x-mds-filter'] === 'range'
      )
        type = 'string';
      else type = 'string | number';
      if (many) type = `${type} | readonly (${type})[]`;
      const doc =
        typeof p.description === 'string' ? `  /** ${p.description.replace(/\*\//g, '* /')} */\n` : '';
      src += `${doc}  ${name}?: ${type};\n`;
    }
    src += '}\n\n';
  }
  src +=
    '/** Every query endpoint: its path, row type and parameter type. */\nexport interface Endpoints {\n';
  for (const e of eps) {
    const T = pascal(e.dataset);
    src += `  ${e.dataset}: { path: '${e.path}'; row: ${T}Row; params: ${T}Params };\n`;
  }
  src += "}\n\nexport const ENDPOINT_PATHS: { readonly [D in keyof Endpoints]: Endpoints[D]['path'] } = {\n";
  for (const e of eps) src += `  ${e.dataset}: '${e.path}',\n`;
  src += '};\n';
  return src;
}

/** The source formatted with the project's Prettier settings (dev dependency, loaded on demand). */
export async function formattedClientTypes(doc: Obj): Promise<string> {
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(import.meta.filename)) ?? {};
  return prettier.format(clientTypesSource(doc), { ...options, parser: 'typescript' });
}

async function main(): Promise<void> {
  const fs = await import('node:fs');
  const { CATALOG } = await import('../catalog/catalog.js');
  const { openApiDocument } = await import('../http/openapi.js');
  const { VERSION } = await import('../version.js');
  const target = new URL('./types.generated.ts', import.meta.url);
  fs.writeFileSync(target, await formattedClientTypes(openApiDocument(CATALOG, VERSION)));
  process.stdout.write(`wrote ${target.pathname}\n`);
}

if (import.meta.filename === process.argv[1]) void main();
