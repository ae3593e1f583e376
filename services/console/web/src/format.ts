/** Display helpers: money stays a decimal string from the API, shown with its currency. */
export const usd = (value: string | number | null | undefined) => {
  if (value === null || value === undefined) return '—';
  const text = String(value);
  return text.startsWith('-') ? `-$${text.slice(1)}` : `$${text}`;
};

export const dateTime = (value: string | number | null | undefined) => {
  if (value === null || value === undefined) return '—';
  const ms = typeof value === 'number' ? (value < 1e12 ? value * 1000 : value) : Date.parse(value);
  return Number.isNaN(ms) ? String(value) : new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
};

export const toMs = (value: string | number) => (typeof value === 'number' ? (value < 1e12 ? value * 1000 : value) : Date.parse(value));

export const json = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));
