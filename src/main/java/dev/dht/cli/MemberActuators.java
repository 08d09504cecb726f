package dev.dht.cli;

import java.net.URI;

/**
 * Where another member's actuator is, seen from the node asked: members are known by their API URL (the view's
 * {@code node}); where the node asked serves its actuator on the same port as its API ({@code --host} is its own URL),
 * so does every member; where the actuator has a port of its own ({@code management.server.port}, 8081 in the image
 * and {@code k8s/}), every member is taken to use the same port as the node asked.
 */
final class MemberActuators {
    private MemberActuators() {
    }

    /**
     * The actuator base URL of {@code member}.
     *
     * @param host the actuator asked ({@code --host})
     * @param self the API URL of the node asked (its {@code "self"})
     */
    static URI of(URI member, URI host, URI self) {
        if (host.getPort() == self.getPort() || member.equals(self)) {
            return member.equals(self) ? host : member;
        }
        return URI.create(member.getScheme() + "://" + member.getHost() + ":" + host.getPort());
    }
}
