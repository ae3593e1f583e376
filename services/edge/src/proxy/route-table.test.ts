import { matchRoute, streamFormatOf } from './route-table';

describe('matchRoute', () => {
  it.each([
    // Model catalogue: no key needed.
    ['/v1/models', { upstream: 'inference', auth: 'optional' }],
    ['/v1/models/openai/gpt-4o-mini', { upstream: 'inference', auth: 'optional' }],
    ['/v1/models/acme%2Fvoice-1.5', { upstream: 'inference', auth: 'optional' }],
    // Everything else needs a key.
    ['/v1/chat/completions', { upstream: 'inference', auth: 'required' }],
    ['/v1/responses', { upstream: 'inference', auth: 'required', allowXApiKey: false }],
    ['/v1/responses/resp_1/cancel', { upstream: 'inference', auth: 'required', allowXApiKey: false }],
    ['/v1/messages', { upstream: 'inference', auth: 'required', allowXApiKey: true }],
    ['/v1/messages/count_tokens', { upstream: 'inference', auth: 'required', allowXApiKey: true }],
    ['/v1/key', { upstream: 'keys', auth: 'required' }],
    ['/v1/keys', { upstream: 'keys', auth: 'required' }],
    ['/v1/keys/' + 'ab'.repeat(32), { upstream: 'keys', auth: 'required' }],
    ['/v1/billing/balance', { upstream: 'billing', auth: 'required' }],
    ['/v1/billing/requests/br-1', { upstream: 'billing', auth: 'required' }],
    ['/v1/billing/requests/resp/with/slashes', { upstream: 'billing', auth: 'required' }],
    ['/v1/files', { upstream: 'batch', auth: 'required' }],
    ['/v1/files/file-abc/content', { upstream: 'batch', auth: 'required' }],
    ['/v1/batches', { upstream: 'batch', auth: 'required' }],
    ['/v1/batches/models', { upstream: 'batch', auth: 'required' }],
    ['/v1/batches/batch_1/cancel', { upstream: 'batch', auth: 'required' }],
    ['/v1/webhooks/settings', { upstream: 'webhooks', auth: 'required', allowXApiKey: false }],
    ['/v1/webhooks/test', { upstream: 'webhooks', auth: 'required' }],
    ['/v1/webhooks/deliveries', { upstream: 'webhooks', auth: 'required' }],
    ['/v1/images', { upstream: 'media', auth: 'required' }],
    ['/v1/images/generations', { upstream: 'media', auth: 'required' }],
    ['/v1/images/edits', { upstream: 'media', auth: 'required' }],
    ['/v1/images/img_1/content', { upstream: 'media', auth: 'required' }],
    ['/v1/videos', { upstream: 'media', auth: 'required' }],
    ['/v1/videos/video_1/content', { upstream: 'media', auth: 'required' }],
    ['/v1/audio/transcriptions', { upstream: 'media', auth: 'required' }],
    ['/v1/audio/speech', { upstream: 'media', auth: 'required' }],
    ['/v1/media/signed/abc.def', { upstream: 'media', auth: 'optional' }],
  ])('%s -> %o', (path, expected) => {
    expect(matchRoute(path)).toMatchObject(expected);
  });

  it.each([
    '/',
    '/v1',
    '/v1/',
    '/v1/unknown',
    '/v2/chat/completions',
    '/chat/completions',
    '/v1/modelsX',
    '/v1/models-private',
    '/v1/chat/completionsX',
    '/v1/responsesX',
    '/v1/messages/extra',
    '/v1/messages/count_tokens/extra',
    '/v1/chat/completions/extra',
    '/v1/keysX',
    '/v1/keyring',
    '/v1/filesX',
    '/v1/batchesX',
    '/v1/billing',
    '/v1/billingX/balance',
    '/v1/webhooks',
    '/v1/webhooksX/settings',
    '/v1/imagesX',
    '/v1/videosX',
    '/v1/audio',
    '/v1/audioX/speech',
    '/v1/media',
    '/v1/media/signed',
    '/livez',
    '/readyz',
    '/metrics',
    '/admin',
  ])('%s is owned by no service (404 at the edge, never forwarded)', (path) => {
    expect(matchRoute(path)).toBeNull();
  });

  it('only the model catalogue and signed media links are reachable without a key', () => {
    const open = ['/v1/models', '/v1/models/x', '/v1/chat/completions', '/v1/key', '/v1/keys', '/v1/billing/balance', '/v1/images', '/v1/media/signed/t']
      .filter((p) => matchRoute(p)?.auth !== 'required');
    expect(open).toEqual(['/v1/models', '/v1/models/x', '/v1/media/signed/t']);
  });
});

describe('streamFormatOf', () => {
  it('names the event format of each streaming route, and none for the rest', () => {
    const paths = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/responses/resp_1', '/v1/async/chat/completions', '/v1/models', '/v1/billing/balance',
      '/v1/images/generations', '/v1/images/edits', '/v1/audio/transcriptions', '/v1/audio/speech', '/v1/images'];
    expect(paths.map(streamFormatOf)).toEqual(['chat', 'responses', 'messages', null, null, null, null, 'chat', 'chat', 'chat', null, null]);
  });
});
