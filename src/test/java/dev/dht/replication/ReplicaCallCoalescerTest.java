package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.failure.OverloadedException;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Coalescing of replica writes with no sockets: each request the coalescer sends is held open by the test
 * until it completes it, so which writes travel together is deterministic.
 */
class ReplicaCallCoalescerTest {
    private final List<Request> requests = new CopyOnWriteArrayList<>();

    /** A request the coalescer sent: its records and the switch that answers it. */
    private record Request(List<String> ids, Sinks.Empty<Void> answer) {
    }

    private ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer(int maxInFlight) {
        return new ReplicaCallCoalescer<>("peer", maxInFlight, RangeFrameCodec::frameBytes, records -> {
            Sinks.Empty<Void> answer = Sinks.empty();
            List<String> ids = new ArrayList<>();
            for (KeyedRecord record : records) {
                ids.add(new String(record.key(), StandardCharsets.UTF_8));
            }
            requests.add(new Request(ids, answer));
            return answer.asMono().thenReturn(Collections.nCopies(records.size(), Boolean.TRUE));
        });
    }

    private static KeyedRecord write(String id, Record record) {
        return new KeyedRecord(id.getBytes(StandardCharsets.UTF_8), record);
    }

    private static List<AtomicReference<Object>> writeAll(ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer, String... ids) {
        List<AtomicReference<Object>> outcomes = new ArrayList<>();
        for (String id : ids) {
            AtomicReference<Object> outcome = new AtomicReference<>();
            coalescer.call(write(id, Record.value(1, new byte[10])))
                    .subscribe(outcome::set, outcome::set);
            outcomes.add(outcome);
        }
        return outcomes;
    }

    @Test
    void writesGoAloneWhileRequestSlotsAreFree() {
        ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer = coalescer(2);
        List<AtomicReference<Object>> outcomes = writeAll(coalescer, "a", "b");
        assertThat(requests).extracting(Request::ids).containsExactly(List.of("a"), List.of("b"));
        requests.get(0).answer().tryEmitEmpty();
        assertThat(outcomes.get(0).get()).isEqualTo(Boolean.TRUE);
        assertThat(outcomes.get(1).get()).as("its request is still open").isNull();
    }

    @Test
    void writesBeyondTheSlotsWaitAndGoTogetherWhenARequestReturns() {
        ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer = coalescer(1);
        List<AtomicReference<Object>> outcomes = writeAll(coalescer, "a", "b", "c", "d");
        assertThat(requests).extracting(Request::ids).containsExactly(List.of("a"));
        assertThat(coalescer.waiting()).isEqualTo(3);

        requests.get(0).answer().tryEmitEmpty();
        assertThat(requests).extracting(Request::ids).containsExactly(List.of("a"), List.of("b", "c", "d"));
        assertThat(outcomes.get(1).get()).as("batch not answered yet").isNull();

        requests.get(1).answer().tryEmitEmpty();
        assertThat(outcomes).extracting(AtomicReference::get).containsOnly(Boolean.TRUE);
        assertThat(coalescer.waiting()).isZero();
    }

    @Test
    void aFailedBatchFailsEveryWriteInItAndTheNextBatchStillGoes() {
        ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer = coalescer(1);
        List<AtomicReference<Object>> outcomes = writeAll(coalescer, "a", "b", "c");
        requests.get(0).answer().tryEmitEmpty();
        writeAll(coalescer, "d");
        IllegalStateException failure = new IllegalStateException("peer down");
        requests.get(1).answer().tryEmitError(failure);

        assertThat(outcomes.get(1).get()).isSameAs(failure);
        assertThat(outcomes.get(2).get()).isSameAs(failure);
        assertThat(requests).extracting(Request::ids).last().isEqualTo(List.of("d"));
    }

    @Test
    void aBatchKeepsToTheRecordLimitAndTheRestFollows() {
        ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer = coalescer(2);
        writeAll(coalescer, ids(2 + ReplicaCallCoalescer.MAX_BATCH_RECORDS + 5));
        requests.get(0).answer().tryEmitEmpty();
        assertThat(requests.get(2).ids()).hasSize(ReplicaCallCoalescer.MAX_BATCH_RECORDS);
        requests.get(1).answer().tryEmitEmpty();
        assertThat(requests.get(3).ids()).hasSize(5);
    }

    @Test
    void aLargeRecordTravelsAlone() {
        ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer = coalescer(1);
        writeAll(coalescer, "a", "b");
        coalescer.call(write("large", Record.value(1, new byte[ReplicaCallCoalescer.MAX_COALESCED_FRAME_BYTES]))).subscribe();
        writeAll(coalescer, "c");

        requests.get(0).answer().tryEmitEmpty();
        requests.get(1).answer().tryEmitEmpty();
        requests.get(2).answer().tryEmitEmpty();
        assertThat(requests).extracting(Request::ids)
                .containsExactly(List.of("a"), List.of("b"), List.of("large"), List.of("c"));
    }

    @Test
    void writesBeyondWhatTheNextRoundOfBatchesCarriesAreRefusedAsOverload() {
        ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer = coalescer(8);
        int limit = 8 * ReplicaCallCoalescer.MAX_BATCH_RECORDS;
        List<AtomicReference<Object>> outcomes = writeAll(coalescer, ids(8 + limit + 1));
        assertThat(outcomes.get(outcomes.size() - 1).get()).isInstanceOf(OverloadedException.class);
        assertThat(outcomes.get(outcomes.size() - 2).get()).as("the last one that fits waits").isNull();
        assertThat(coalescer.waiting()).isEqualTo(limit);

        for (int i = 0; i < 8; i++) {
            requests.get(i).answer().tryEmitEmpty();
        }
        assertThat(coalescer.waiting()).as("one round of batches took them all").isZero();
    }

    @Test
    void withFewRequestsInFlightFourBatchesWorthMayWaitBeforeRefusals() {
        ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer = coalescer(1);
        int limit = ReplicaCallCoalescer.MIN_WAITING_BATCHES * ReplicaCallCoalescer.MAX_BATCH_RECORDS;
        List<AtomicReference<Object>> outcomes = writeAll(coalescer, ids(1 + limit + 1));
        assertThat(outcomes.get(outcomes.size() - 1).get()).isInstanceOf(OverloadedException.class);
        assertThat(outcomes.get(outcomes.size() - 2).get()).as("the last one that fits waits").isNull();
        assertThat(coalescer.waiting()).isEqualTo(limit);

        for (int round = 0; round < ReplicaCallCoalescer.MIN_WAITING_BATCHES; round++) {
            requests.get(round).answer().tryEmitEmpty();
        }
        assertThat(coalescer.waiting()).as("four batches, one after another, took them all").isZero();
        assertThat(requests).hasSize(1 + ReplicaCallCoalescer.MIN_WAITING_BATCHES);
        requests.get(ReplicaCallCoalescer.MIN_WAITING_BATCHES).answer().tryEmitEmpty();
        assertThat(outcomes.subList(0, outcomes.size() - 1))
                .allSatisfy(outcome -> assertThat(outcome.get()).isEqualTo(Boolean.TRUE));
    }

    private static String[] ids(int count) {
        String[] ids = new String[count];
        for (int i = 0; i < count; i++) {
            ids[i] = "k" + i;
        }
        return ids;
    }

    @Test
    void nothingIsSentUntilSubscribed() {
        ReplicaCallCoalescer<KeyedRecord, Boolean> coalescer = coalescer(1);
        Mono<Boolean> write = coalescer.call(write("a", Record.tombstone(1)));
        assertThat(requests).isEmpty();
        write.subscribe();
        assertThat(requests).hasSize(1);
    }

    @Test
    void eachCallOfABatchGetsItsOwnResultAndAShortAnswerFailsThemAll() {
        List<Sinks.One<List<String>>> answers = new CopyOnWriteArrayList<>();
        ReplicaCallCoalescer<String, String> reads = new ReplicaCallCoalescer<>("peer", 1, String::length, keys -> {
            Sinks.One<List<String>> answer = Sinks.one();
            answers.add(answer);
            return answer.asMono();
        });
        List<AtomicReference<Object>> outcomes = new ArrayList<>();
        for (String key : List.of("a", "b", "c", "d", "e", "f")) {
            AtomicReference<Object> outcome = new AtomicReference<>();
            reads.call(key).subscribe(outcome::set, outcome::set);
            outcomes.add(outcome);
        }
        answers.get(0).tryEmitValue(List.of("A"));
        answers.get(1).tryEmitValue(List.of("B", "C", "D", "E", "F"));
        assertThat(outcomes).extracting(AtomicReference::get).containsExactly("A", "B", "C", "D", "E", "F");

        AtomicReference<Object> lost = new AtomicReference<>();
        reads.call("g").subscribe(lost::set, lost::set);
        reads.call("h").subscribe(lost::set, lost::set);
        answers.get(2).tryEmitValue(List.of());
        assertThat(lost.get()).as("g, answered with no result").isInstanceOf(IllegalStateException.class);
        assertThat(answers).as("h goes once the slot is free again").hasSize(4);
    }
}
