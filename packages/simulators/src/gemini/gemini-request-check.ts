/**
 * The request checks Gemini makes that a translator can get wrong. Gemini parses bodies into protobufs, so
 * an unknown field anywhere (a stray JSON Schema keyword in a function's parameters, an OpenAI-style
 * parameter) is a 400, not silently ignored; the simulator is as strict so tests catch such leaks.
 */

const REQUEST_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent']);

const GENERATION_CONFIG_FIELDS = new Set([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'thinkingConfig',
  'mediaResolution',
  'speechConfig',
]);

const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const unknownField = (name: string, at?: string) => `Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ''}: Cannot find field.`;

/** The 400 message Gemini would answer with, or undefined for a request it accepts. */
export function checkGeminiRequest(body: unknown): string | undefined {
  if (!isObject(body)) return 'Invalid JSON payload received. Expected an object.';
  for (const key of Object.keys(body)) if (!REQUEST_FIELDS.has(key)) return unknownField(key);
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified\n';
  for (const [i, content] of contents.entries()) {
    if (!isObject(content) || (content.role !== 'user' && content.role !== 'model')) return 'Please use a valid role: user, model.';
    if (!Array.isArray(content.parts) || content.parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`;
  }
  const config = body.generationConfig;
  if (config !== undefined) {
    if (!isObject(config)) return unknownField('generationConfig');
    for (const key of Object.keys(config)) if (!GENERATION_CONFIG_FIELDS.has(key)) return unknownField(key, 'generation_config');
    if (config.responseSchema !== undefined) {
      const problem = checkSchema(config.responseSchema, 'generation_config.response_schema');
      if (problem) return problem;
    }
  }
  if (body.tools !== undefined) return checkTools(body.tools);
  return undefined;
}

function checkTools(tools: unknown): string | undefined {
  if (!Array.isArray(tools)) return unknownField('tools');
  for (const [i, tool] of tools.entries()) {
    const declarations = isObject(tool) ? tool.functionDeclarations : undefined;
    if (!Array.isArray(declarations)) continue;
    for (const [j, declaration] of declarations.entries()) {
      const at = `tools[${i}].function_declarations[${j}]`;
      if (!isObject(declaration) || typeof declaration.name !== 'string' || declaration.name === '') return `* GenerateContentRequest.${at}.name: [FIELD_INVALID] Invalid function name.\n`;
      if (declaration.parameters !== undefined) {
        const problem = checkSchema(declaration.parameters, `${at}.parameters`);
        if (problem) return problem;
      }
    }
  }
  return undefined;
}

function checkSchema(schema: unknown, at: string): string | undefined {
  if (!isObject(schema)) return unknownField('schema', at);
  for (const key of Object.keys(schema)) if (!SCHEMA_FIELDS.has(key)) return unknownField(key, at);
  if (schema.type === 'object' && isObject(schema.properties) && Object.keys(schema.properties).length === 0) {
    return `* GenerateContentRequest.${at}.properties: should be non-empty for OBJECT type\n`;
  }
  if (isObject(schema.properties)) {
    for (const [name, value] of Object.entries(schema.properties)) {
      const problem = checkSchema(value, `${at}.properties[${name}].value`);
      if (problem) return problem;
    }
  }
  if (schema.items !== undefined) {
    const problem = checkSchema(schema.items, `${at}.items`);
    if (problem) return problem;
  }
  for (const [k, alternative] of (Array.isArray(schema.anyOf) ? schema.anyOf : []).entries()) {
    const problem = checkSchema(alternative, `${at}.any_of[${k}]`);
    if (problem) return problem;
  }
  return undefined;
}
