import { z } from 'zod';

/**
 * Gemini `generateContent` wire shapes. Loose objects: Gemini adds fields (thoughtSignature, safetyRatings,
 * citationMetadata, serviceTier, promptTokensDetails...) that we neither need nor want to reject.
 */

// ---- Request (what we send; typed, not validated) ----

export interface GeminiInlineData {
  mimeType: string;
  /** Base64. */
  data: string;
}

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: GeminiInlineData;
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { name: string; args: Record<string, unknown> };
  functionResponse?: { name: string; response: Record<string, unknown> };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface GeminiGenerationConfig {
  stopSequences?: string[];
  responseMimeType?: string;
  responseSchema?: Record<string, unknown>;
  candidateCount?: number;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseLogprobs?: boolean;
  logprobs?: number;
  thinkingConfig?: { thinkingBudget?: number; includeThoughts?: boolean };
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
  [extra: string]: unknown;
}

// ---- Response and stream events (validated) ----

const partSchema = z.looseObject({
  text: z.string().nullish(),
  thought: z.boolean().nullish(),
  functionCall: z
    .looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()).nullish() })
    .nullish(),
});

const logprobsCandidateSchema = z.looseObject({ token: z.string().nullish(), logProbability: z.number().nullish() });

export const geminiLogprobsResultSchema = z.looseObject({
  topCandidates: z.array(z.looseObject({ candidates: z.array(logprobsCandidateSchema).nullish() })).nullish(),
  chosenCandidates: z.array(logprobsCandidateSchema).nullish(),
});

export const geminiCandidateSchema = z.looseObject({
  // Absent when the candidate was blocked before producing anything.
  content: z.looseObject({ role: z.string().nullish(), parts: z.array(partSchema).nullish() }).nullish(),
  finishReason: z.string().nullish(),
  index: z.number().nullish(),
  logprobsResult: geminiLogprobsResultSchema.nullish(),
});

export const geminiUsageMetadataSchema = z.looseObject({
  promptTokenCount: z.number().nullish(),
  candidatesTokenCount: z.number().nullish(),
  thoughtsTokenCount: z.number().nullish(),
  totalTokenCount: z.number().nullish(),
});

/** A whole answer, and also each `data:` event of a stream. */
export const geminiResponseSchema = z.looseObject({
  candidates: z.array(geminiCandidateSchema).nullish(),
  promptFeedback: z.looseObject({ blockReason: z.string().nullish() }).nullish(),
  usageMetadata: geminiUsageMetadataSchema.nullish(),
  modelVersion: z.string().nullish(),
  responseId: z.string().nullish(),
});

/** Google's error body, as an HTTP answer and as an in-stream event. */
export const geminiErrorSchema = z.looseObject({
  error: z.looseObject({
    code: z.number().nullish(),
    message: z.string().nullish(),
    status: z.string().nullish(),
    details: z.array(z.looseObject({ '@type': z.string().nullish(), reason: z.string().nullish(), retryDelay: z.string().nullish() })).nullish(),
  }),
});

export type GeminiResponse = z.infer<typeof geminiResponseSchema>;
export type GeminiCandidate = z.infer<typeof geminiCandidateSchema>;
export type GeminiUsageMetadata = z.infer<typeof geminiUsageMetadataSchema>;
export type GeminiLogprobsResult = z.infer<typeof geminiLogprobsResultSchema>;
export type GeminiError = z.infer<typeof geminiErrorSchema>;
