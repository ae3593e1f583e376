// In-memory MongoDB wire-protocol server for local tests (mongo-java-server, memory backend).
// InMemoryMongoServer only binds 27017; this launcher binds 127.0.0.1:<port> instead.
// Run: java -cp '<mongo-libs>/*' MongoWireServer.java <port>   (Java 17 source-launch mode)
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

public class MongoWireServer {
    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 27018;
        MongoServer server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", port);
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        System.out.println("MongoWireServer listening on 127.0.0.1:" + port);
        Thread.currentThread().join(); // netty threads serve; keep main alive until SIGTERM
    }
}
