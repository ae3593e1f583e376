import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/**
 * A gRPC server reflection client (grpc.reflection.v1, what `grpcurl list` and `grpcurl describe` use), on the
 * reflection contract @grpc/reflection ships: asks a server what it serves, with no .proto file of ours.
 */
const REFLECTION_PROTO = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto/grpc/reflection/v1/reflection.proto');

interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
}
type ReflectionRequest = { list_services: string } | { file_containing_symbol: string };
type ReflectionClient = grpc.Client & { ServerReflectionInfo(): grpc.ClientDuplexStream<ReflectionRequest, ReflectionResponse> };

const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(REFLECTION_PROTO, { keepCase: true, defaults: true, oneofs: true })) as unknown as {
  grpc: { reflection: { v1: { ServerReflection: new (address: string, creds: grpc.ChannelCredentials) => ReflectionClient } } };
};

async function ask(address: string, request: ReflectionRequest): Promise<ReflectionResponse> {
  const client = new loaded.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
  try {
    return await new Promise<ReflectionResponse>((resolve, reject) => {
      const call = client.ServerReflectionInfo();
      call.once('data', (res: ReflectionResponse) => { resolve(res); call.end(); });
      call.once('error', reject);
      call.write(request);
    });
  } finally {
    client.close();
  }
}

/** The fully qualified names of the services at `address` (`grpcurl -plaintext <address> list`). */
export async function listServices(address: string): Promise<string[]> {
  const res = await ask(address, { list_services: '' });
  return (res.list_services_response?.service ?? []).map((s) => s.name).sort();
}

/** The serialized descriptors of the files declaring `symbol` (`grpcurl describe <symbol>`), as text to search. */
export async function describeSymbol(address: string, symbol: string): Promise<string> {
  const res = await ask(address, { file_containing_symbol: symbol });
  if (res.error_response) throw new Error(`reflection: ${res.error_response.error_message}`);
  return (res.file_descriptor_response?.file_descriptor_proto ?? []).map((b) => b.toString('latin1')).join('\n');
}
