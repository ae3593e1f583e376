export { chatCapabilities, createChatProvider, type ChatProviderKind } from './create-chat-provider';
export { OpenAICompatibleChatProvider } from './openai-compatible/openai-chat-provider';
export { OriginPools } from './http/origin-pools';
export { createNativeTranslator } from './create-native-translator';
export { createNativeBatchProvider, hasNativeBatchAdapter } from './create-native-batch-provider';
export { createVideoProvider, videoCapabilities, type VideoProviderKind } from './create-video-provider';
export { createMediaProvider } from './create-media-provider';
export { OPENAI_MEDIA_CAPABILITIES, OpenAIMediaProvider } from './openai-media/openai-media-provider';
export { ESPEAK_CAPABILITIES, EspeakSpeechProvider } from './espeak-ng/espeak-speech-provider';
