import { InputError } from '@gw/platform';
import { findUnsupportedVideoParameter, type VideoCapabilities, type VideoGenerationRequest } from '@gw/provider-spec';

/**
 * The normalized video request in OpenAI's `/videos` body: `size` is chosen from resolution and aspect ratio,
 * `seconds` is a string of the duration. What the API has no field for is refused, naming the parameter.
 */
export const OPENAI_VIDEO_CAPABILITIES: VideoCapabilities = {
  parameters: {
    resolution: 'supported',
    duration: 'supported',
    aspect_ratio: 'supported',
    // Every video of this API has sound; asking for none cannot be honoured.
    generate_audio: { honouredWhen: (v) => v === true, values: 'true' },
    return_last_frame: { honouredWhen: (v) => v === false, values: 'false' },
    seed: 'unsupported',
    watermark: { honouredWhen: (v) => v === false, values: 'false' },
  },
};

/** The sizes the API accepts, by resolution and aspect ratio. */
const SIZES: Record<string, Record<string, string>> = {
  '720p': { '16:9': '1280x720', '9:16': '720x1280' },
  '1080p': { '16:9': '1792x1024', '9:16': '1024x1792' },
};
export const OPENAI_VIDEO_SECONDS = [4, 8, 12];

export interface OpenAIVideoBody {
  model: string;
  prompt: string;
  size?: string;
  seconds?: string;
}

export function convertToOpenAIVideo(req: VideoGenerationRequest, providerModel: string): OpenAIVideoBody {
  const unsupported = findUnsupportedVideoParameter(OPENAI_VIDEO_CAPABILITIES, req);
  if (unsupported) throw new InputError(unsupported.message, unsupported.param, 'unsupported_parameter');
  const body: OpenAIVideoBody = { model: providerModel, prompt: req.prompt };
  if (req.resolution !== undefined || req.aspect_ratio !== undefined) {
    const resolution = req.resolution ?? '720p';
    const byRatio = SIZES[resolution];
    if (!byRatio) throw new InputError(`resolution must be one of ${Object.keys(SIZES).join(', ')} for this model's provider`, 'resolution', 'unsupported_value');
    const size = byRatio[req.aspect_ratio ?? '16:9'];
    if (!size) throw new InputError(`aspect_ratio must be one of ${Object.keys(byRatio).join(', ')} for this model's provider`, 'aspect_ratio', 'unsupported_value');
    body.size = size;
  }
  if (req.duration !== undefined) {
    if (!OPENAI_VIDEO_SECONDS.includes(req.duration)) {
      throw new InputError(`duration must be one of ${OPENAI_VIDEO_SECONDS.join(', ')} seconds for this model's provider`, 'duration', 'unsupported_value');
    }
    body.seconds = String(req.duration);
  }
  return body;
}
