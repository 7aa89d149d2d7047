import { Type } from '@sinclair/typebox';

/**
 * POST /mcp bodies and answers as the OpenAPI document describes them: JSON-RPC 2.0 messages of
 * the Model Context Protocol (docs/mcp.md). The protocol's own schemas (the SDK's) check them;
 * these only say their shape to readers of the document.
 */

const JsonRpcId = Type.Union([Type.String(), Type.Integer(), Type.Null()]);

export const McpMessageSchema = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(JsonRpcId),
    method: Type.String({ description: 'initialize, tools/list, tools/call, notifications/initialized, …' }),
    params: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { title: 'McpMessage', additionalProperties: true },
);

export const McpRequestSchema = Type.Union([McpMessageSchema, Type.Array(McpMessageSchema, { minItems: 1 })]);

const McpAnswerItem = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: JsonRpcId,
    result: Type.Optional(Type.Object({}, { additionalProperties: true })),
    error: Type.Optional(
      Type.Object({ code: Type.Integer(), message: Type.String() }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: true },
);

export const McpAnswerSchema = Type.Union([McpAnswerItem, Type.Array(McpAnswerItem)], { title: 'McpAnswer' });
