# The dht node image: Spring Boot's layered jar on an Eclipse Temurin 17 JRE, run as a non-root user, with a class data
# sharing archive made at build time (Spring Boot's "Dockerfiles" page, CDS): a training run (dev.dht.TrainingRun: a
# one-node cluster that sends itself client requests, then exits) writes the classes it loaded to dht.jsa, and every
# start maps them instead of loading them (docs/performance.md). The archive serves the JRE of this image only.
#
#   ./mvnw -B -DskipTests package && docker build -t REGISTRY/dht:TAG . && docker push REGISTRY/dht:TAG
#
# JRE_IMAGE is the runtime base; the container tests (ClusterContainersIT) build this same file on a local
# JRE image instead, as no registry is reachable there.
ARG JRE_IMAGE=eclipse-temurin:17-jre

# Split the jar into its layers (dependencies change less often than the application).
FROM ${JRE_IMAGE} AS layers
WORKDIR /build
COPY target/dht.jar dht.jar
RUN java -Djarmode=tools -jar dht.jar extract --layers --destination extracted

FROM ${JRE_IMAGE}
WORKDIR /app
COPY --from=layers /build/extracted/dependencies/ ./
COPY --from=layers /build/extracted/spring-boot-loader/ ./
COPY --from=layers /build/extracted/snapshot-dependencies/ ./
COPY --from=layers /build/extracted/application/ ./
# The training run: an empty data dir, free ports, a separate management port as the image's own settings below.
RUN java -XX:ArchiveClassesAtExit=dht.jsa -Xlog:cds*=error -Ddht.training-run=true -jar dht.jar \
      --dht.data-dir=/tmp/cds-training --server.port=0 --management.server.port=0 --dht.self=http://localhost:18080 \
      --logging.level.root=warn && rm -rf /tmp/cds-training
# dht, the operator's command line, on the PATH: kubectl exec dht-0 -- dht status (it runs the application in /app)
COPY bin/dht /usr/local/bin/dht
# The data dir belongs to the non-root user that runs the node; the command line runs for everyone.
RUN mkdir -p /var/lib/dht && chown 10001:10001 /var/lib/dht && chmod 755 /usr/local/bin/dht
USER 10001:10001
# 8080: the v0 API (and /internal/* for peers); 8081: the actuator alone (probes, metrics, repair), so a Service or
# port that exposes the API does not expose the operations. Without MANAGEMENT_SERVER_PORT the actuator is on 8080.
# DHT_HOST: the actuator the command line asks by default, this node's.
ENV SERVER_PORT=8080 MANAGEMENT_SERVER_PORT=8081 DHT_DATA_DIR=/var/lib/dht DHT_HOST=http://localhost:8081
VOLUME /var/lib/dht
EXPOSE 8080 8081 9080
ENTRYPOINT ["java", "-XX:SharedArchiveFile=dht.jsa", "-jar", "dht.jar"]
