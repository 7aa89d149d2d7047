import { Type } from '@sinclair/typebox';

/** GET /health (decisions.md: `{"status":"ok"}`, more fields allowed; 503 with "error"). */
export const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
    version: Type.String(),
    storage: Type.String({ description: 'sqlite or postgres' }),
  },
  { title: 'Health' },
);
