import { z } from 'zod';

/** Seedream's answer to `POST /api/v3/images/generations` (Ark): one entry per image, each an image or its own error. */
const arkErrorSchema = z.looseObject({ code: z.string().nullish(), message: z.string().nullish() });

export const seedreamImagesSchema = z.looseObject({
  model: z.string().nullish(),
  created: z.number(),
  data: z.array(z.looseObject({
    url: z.string().nullish(),
    b64_json: z.string().nullish(),
    size: z.string().nullish(),
    error: arkErrorSchema.nullish(),
  })),
  usage: z.looseObject({ generated_images: z.number().nullish(), output_tokens: z.number().nullish(), total_tokens: z.number().nullish() }).nullish(),
  error: arkErrorSchema.nullish(),
});

export type SeedreamImages = z.infer<typeof seedreamImagesSchema>;
