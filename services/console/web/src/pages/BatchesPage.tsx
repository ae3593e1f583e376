import { useState, type FormEvent } from 'react';
import { api, ApiError, type Batch, type Video } from '../api';
import { ErrorNotice, Section, useLoad, useRefreshWhile } from '../components';
import { dateTime } from '../format';

const BATCH_DONE = new Set(['completed', 'failed', 'expired', 'cancelled']);
const VIDEO_DONE = new Set(['completed', 'failed']);

/** The account's batches with their progress (refreshed while any runs), and a video job looked up by id (the API lists no videos). */
export function BatchesPage() {
  const batches = useLoad(() => api<{ data: Batch[] }>('/v1/batches?limit=100').then((r) => r.data));
  useRefreshWhile(Boolean(batches.data?.some((b) => !BATCH_DONE.has(b.status))), batches.reload);
  return (
    <>
      <Section title="Batches">
        <button type="button" onClick={batches.reload}>Refresh batches</button>
        {batches.error ? <ErrorNotice error={batches.error} feature="batches (GET /v1/batches)" /> : null}
        {batches.data ? <BatchTable rows={batches.data} /> : null}
      </Section>
      <VideoLookup />
    </>
  );
}

function BatchTable({ rows }: { rows: Batch[] }) {
  if (rows.length === 0) return <p>No batches yet.</p>;
  return (
    <table aria-label="Batches">
      <thead>
        <tr><th scope="col">Batch</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Created</th></tr>
      </thead>
      <tbody>
        {rows.map((b) => {
          const { total, completed, failed } = b.request_counts;
          return (
            <tr key={b.id}>
              <th scope="row"><code>{b.id}</code></th><td>{b.endpoint}</td><td>{b.status}</td>
              <td>
                <progress max={Math.max(total, 1)} value={completed + failed} aria-label={`Progress of ${b.id}`} />
                {' '}{completed + failed} / {total}{failed ? ` (${failed} failed)` : ''}
              </td>
              <td>{dateTime(b.created_at)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function VideoLookup() {
  const [draft, setDraft] = useState('');
  const [id, setId] = useState<string | null>(null);
  const submit = (e: FormEvent) => { e.preventDefault(); setId(draft.trim()); };
  return (
    <Section title="Videos">
      <form onSubmit={submit} aria-label="Find a video">
        <label>Video id<input value={draft} onChange={(e) => setDraft(e.target.value)} required spellCheck={false} /></label>
        <button type="submit">Show video</button>
      </form>
      {id ? <VideoStatus key={id} id={id} /> : null}
    </Section>
  );
}

function VideoStatus({ id }: { id: string }) {
  const video = useLoad(() => api<Video>(`/v1/videos/${encodeURIComponent(id)}`));
  useRefreshWhile(Boolean(video.data && !VIDEO_DONE.has(video.data.status)), video.reload);
  if (video.error) {
    if (video.error instanceof ApiError && video.error.status === 404 && !video.error.routeMissing) return <p role="alert">No video with id {id}.</p>;
    return <ErrorNotice error={video.error} feature="videos (GET /v1/videos/{id})" />;
  }
  if (!video.data) return <p role="status">Loading video…</p>;
  const v = video.data;
  return (
    <dl aria-label="Video">
      <dt>Video</dt><dd><code>{v.id}</code> ({v.model}){v.prompt ? `: ${v.prompt}` : ''}</dd>
      <dt>Status</dt><dd>{v.status}{v.error?.message ? `: ${v.error.message}` : ''}</dd>
      <dt>Progress</dt><dd><progress max={100} value={v.progress ?? 0} aria-label={`Progress of ${v.id}`} /> {v.progress ?? 0}%</dd>
      {v.video_url ? <><dt>Video file</dt><dd><a href={v.video_url}>Download the video</a></dd></> : null}
    </dl>
  );
}
