import { Type } from '@sinclair/typebox';

/** GET /health (decisions.md: `{"status":"ok"}`, more fields allowed; 503 with "error"). */
export const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
    version: Type.String(),
    storage: Type.String({ description: 'sqlite or postgres' }),
    database_id: Type.String({
      description:
        'a fingerprint of the database this server writes to (no path, host or credentials): the CLI compares its own with it',
    }),
  },
  { title: 'Health' },
);
