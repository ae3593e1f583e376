import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition, PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';

interface LoadedMethod {
  path: string;
  /** Present on methods loaded by proto-loader: the message and the descriptors of the files declaring it. */
  requestType?: Partial<MessageTypeDefinition<object, object>>;
}

/**
 * gRPC server reflection (`grpcurl list`, `describe`) of exactly the services a server serves, from the
 * descriptors proto-loader attached to their methods. Services not loaded from a .proto are left out.
 */
export function reflectionFor(definitions: grpc.ServiceDefinition[]): ReflectionService {
  const root: PackageDefinition = {};
  const services = new Set<string>();
  for (const definition of definitions) {
    for (const method of Object.values(definition) as LoadedMethod[]) {
      if (!method.requestType?.fileDescriptorProtos) continue;
      // `/package.Service/Method`
      services.add(method.path.split('/')[1]);
      root[method.path] = method.requestType as MessageTypeDefinition<object, object>;
    }
  }
  return new ReflectionService(root, { services: [...services] });
}
