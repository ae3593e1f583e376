import { InputError } from '@gw/platform';
import { findUnsupportedVideoParameter, type VideoCapabilities, type VideoGenerationRequest } from '@gw/provider-spec';

/** Seedance honours every normalized video field, each under its own name (aspect_ratio as `ratio`). */
export const SEEDANCE_CAPABILITIES: VideoCapabilities = {
  parameters: {
    resolution: 'supported', duration: 'supported', aspect_ratio: 'supported', generate_audio: 'supported',
    return_last_frame: 'supported', seed: 'supported', watermark: 'supported',
  },
};

export const SEEDANCE_RESOLUTIONS = ['480p', '720p', '1080p'];
export const SEEDANCE_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'];
export const SEEDANCE_DURATION = { min: 2, max: 12 };
export const SEEDANCE_SEED = { min: -1, max: 4_294_967_295 };

export interface SeedanceTaskBody {
  model: string;
  content: Array<{ type: 'text'; text: string }>;
  resolution?: string;
  ratio?: string;
  duration?: number;
  seed?: number;
  watermark?: boolean;
  return_last_frame?: boolean;
  generate_audio?: boolean;
}

const refuse = (message: string, param: string) => new InputError(message, param, 'unsupported_value');

export function convertToSeedanceTask(req: VideoGenerationRequest, providerModel: string): SeedanceTaskBody {
  const unsupported = findUnsupportedVideoParameter(SEEDANCE_CAPABILITIES, req);
  if (unsupported) throw new InputError(unsupported.message, unsupported.param, 'unsupported_parameter');
  if (req.resolution !== undefined && !SEEDANCE_RESOLUTIONS.includes(req.resolution)) throw refuse(`resolution must be one of ${SEEDANCE_RESOLUTIONS.join(', ')}`, 'resolution');
  if (req.aspect_ratio !== undefined && !SEEDANCE_RATIOS.includes(req.aspect_ratio)) throw refuse(`aspect_ratio must be one of ${SEEDANCE_RATIOS.join(', ')}`, 'aspect_ratio');
  if (req.duration !== undefined && !(Number.isInteger(req.duration) && req.duration >= SEEDANCE_DURATION.min && req.duration <= SEEDANCE_DURATION.max)) {
    throw refuse(`duration must be a whole number of seconds from ${SEEDANCE_DURATION.min} to ${SEEDANCE_DURATION.max}`, 'duration');
  }
  if (req.seed !== undefined && !(Number.isInteger(req.seed) && req.seed >= SEEDANCE_SEED.min && req.seed <= SEEDANCE_SEED.max)) {
    throw refuse(`seed must be an integer from ${SEEDANCE_SEED.min} to ${SEEDANCE_SEED.max}`, 'seed');
  }
  const body: SeedanceTaskBody = { model: providerModel, content: [{ type: 'text', text: req.prompt }] };
  if (req.resolution !== undefined) body.resolution = req.resolution;
  if (req.aspect_ratio !== undefined) body.ratio = req.aspect_ratio;
  if (req.duration !== undefined) body.duration = req.duration;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.watermark !== undefined) body.watermark = req.watermark;
  if (req.return_last_frame !== undefined) body.return_last_frame = req.return_last_frame;
  if (req.generate_audio !== undefined) body.generate_audio = req.generate_audio;
  return body;
}
