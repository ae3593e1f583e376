import { InputError } from '@gw/platform';
import { isNativeBatchLineKey, type NativeBatchLine } from '@gw/provider-spec';

/**
 * The lines as given, checking each line key (NATIVE_BATCH_LINE_KEY_PATTERN, unique in the batch) and
 * prefixing a conversion error's param with the line it came from.
 */
export async function* checkedLines(lines: AsyncIterable<NativeBatchLine> | Iterable<NativeBatchLine>): AsyncGenerator<NativeBatchLine> {
  const seen = new Set<string>();
  let count = 0;
  for await (const line of lines) {
    if (!isNativeBatchLineKey(line.custom_id)) {
      throw new InputError(`Line key "${line.custom_id}" must be 1 to 64 letters, digits, "_" or "-"`, 'custom_id', 'invalid_line_key');
    }
    if (seen.has(line.custom_id)) throw new InputError(`Line key "${line.custom_id}" appears twice`, 'custom_id', 'duplicate_custom_id');
    seen.add(line.custom_id);
    count++;
    yield line;
  }
  if (count === 0) throw new InputError('A batch needs at least one line', 'lines', 'empty_batch');
}

/** Runs `convert` for one line, naming the line in the param of the InputError it throws. */
export function convertLine<T>(line: NativeBatchLine, convert: () => T): T {
  try {
    return convert();
  } catch (err) {
    if (err instanceof InputError) throw new InputError(`Line ${line.custom_id}: ${err.message}`, `${line.custom_id}.body${err.param ? `.${err.param}` : ''}`, err.code);
    throw err;
  }
}
