import type { SimulatedGeminiAnswer } from './simulated-gemini-answer';

/** Gemini GenerateContentResponse and error bodies, in the shapes the real API sends. */

export interface GeminiCallInfo {
  responseId: string;
  /** The served snapshot, e.g. `gemini-2.5-flash-2026-01-01`. */
  modelVersion: string;
}

const SAFETY_CATEGORIES = ['HARM_CATEGORY_HATE_SPEECH', 'HARM_CATEGORY_DANGEROUS_CONTENT', 'HARM_CATEGORY_HARASSMENT', 'HARM_CATEGORY_SEXUALLY_EXPLICIT'];

/** Cumulative usage after `candidateTokens` answer tokens of every candidate. */
function usageMetadata(a: SimulatedGeminiAnswer, candidateTokens: number) {
  const candidates = candidateTokens * a.candidateCount;
  return {
    promptTokenCount: a.promptTokens,
    ...(candidates > 0 ? { candidatesTokenCount: candidates } : {}),
    totalTokenCount: a.promptTokens + candidates + a.thoughtsTokens,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: a.promptTokens }],
    ...(a.thoughtsTokens > 0 ? { thoughtsTokenCount: a.thoughtsTokens } : {}),
  };
}

function logprobsResult(tokens: string[], top: number) {
  const chosen = tokens.map((token, i) => ({ token, logProbability: -0.01 * (i + 1) }));
  return {
    topCandidates: chosen.map((c) => ({
      candidates: Array.from({ length: top }, (_, k) => ({ token: k === 0 ? c.token : `${c.token}#${k}`, logProbability: c.logProbability - k })),
    })),
    chosenCandidates: chosen,
  };
}

/** One candidate holding `parts` (nothing for a blocked one), finished with `finishReason` when given. */
function candidate(a: SimulatedGeminiAnswer, index: number, parts: object[], finishReason: string | undefined, tokens: string[]) {
  const refused = finishReason === 'SAFETY';
  return {
    ...(parts.length > 0 ? { content: { parts, role: 'model' } } : {}),
    ...(finishReason ? { finishReason } : {}),
    ...(refused ? { safetyRatings: SAFETY_CATEGORIES.map((category, i) => ({ category, probability: i === 0 ? 'HIGH' : 'NEGLIGIBLE', ...(i === 0 ? { blocked: true } : {}) })) } : {}),
    ...(a.topLogprobs !== undefined && tokens.length > 0 ? { logprobsResult: logprobsResult(tokens, a.topLogprobs) } : {}),
    index,
  };
}

/** Every candidate gets the same slice: the simulated model answers each one alike. */
function response(call: GeminiCallInfo, a: SimulatedGeminiAnswer, parts: object[], tokens: string[], finishReason: string | undefined, tokensSoFar: number) {
  return {
    candidates: Array.from({ length: a.candidateCount }, (_, index) => candidate(a, index, parts, finishReason, tokens)),
    usageMetadata: usageMetadata(a, tokensSoFar),
    modelVersion: call.modelVersion,
    responseId: call.responseId,
  };
}

/** Tokens of the answer text as the stream sends them: words, every one but the first with its leading space. */
function tokensOf(a: SimulatedGeminiAnswer): string[] {
  return a.words.map((word, i) => (i === 0 ? word : ` ${word}`));
}

function thoughtParts(a: SimulatedGeminiAnswer): object[] {
  return a.thought !== undefined ? [{ text: a.thought, thought: true }] : [];
}

export function generateContentBody(call: GeminiCallInfo, a: SimulatedGeminiAnswer) {
  if (a.finishReason === 'SAFETY') return response(call, a, [], [], 'SAFETY', 0);
  const parts = [...thoughtParts(a), ...(a.functionCall ? [{ functionCall: a.functionCall }] : [{ text: a.words.join(' ') }])];
  return response(call, a, parts, a.functionCall ? [] : tokensOf(a), a.finishReason, a.candidateTokens);
}

/** The `data:` payloads of a stream, in order: thoughts, then one event per word; the last one finishes. */
export function streamEvents(call: GeminiCallInfo, a: SimulatedGeminiAnswer): string[] {
  if (a.finishReason === 'SAFETY' || a.functionCall) return [JSON.stringify(generateContentBody(call, a))];
  const events: string[] = [];
  if (a.thought !== undefined) events.push(JSON.stringify(response(call, a, thoughtParts(a), [], undefined, 0)));
  const tokens = tokensOf(a);
  tokens.forEach((token, i) => {
    const last = i === tokens.length - 1;
    events.push(JSON.stringify(response(call, a, [{ text: token }], [token], last ? a.finishReason : undefined, i + 1)));
  });
  if (tokens.length === 0) events.push(JSON.stringify(response(call, a, [{ text: '' }], [], a.finishReason, 0)));
  return events;
}

const CANONICAL_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function geminiErrorBody(code: number, message: string, details?: object[]) {
  const status = CANONICAL_STATUS[code] ?? (code === 400 ? 'FAILED_PRECONDITION' : 'UNKNOWN');
  return { error: { code, message, status, ...(details ? { details } : {}) } };
}

export const MISSING_KEY_BODY = geminiErrorBody(
  403,
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
);

export const INVALID_KEY_BODY = geminiErrorBody(400, 'API key not valid. Please pass a valid API key.', [
  { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
  { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
]);

/** The error Gemini sends for a given status, used by the `sim-error-<status>` knob. */
export function simulatedErrorBody(status: number, model: string) {
  switch (status) {
    case 400:
      return geminiErrorBody(400, 'Request contains an invalid argument: simulated invalid request.');
    case 401:
      return geminiErrorBody(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
    case 403:
      return geminiErrorBody(403, 'The caller does not have permission');
    case 404:
      return geminiErrorBody(404, `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`);
    case 429:
      return geminiErrorBody(429, 'You exceeded your current quota, please check your plan and billing details.', [
        { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_requests', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel' }] },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' },
      ]);
    case 500:
      return geminiErrorBody(500, 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting');
    case 503:
      return geminiErrorBody(503, 'The model is overloaded. Please try again later.');
    case 504:
      return geminiErrorBody(504, 'Deadline expired before operation could complete.');
    default:
      return geminiErrorBody(status, `Simulated error ${status}.`);
  }
}
