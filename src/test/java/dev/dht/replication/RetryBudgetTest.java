package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The budget of speculative read retries: a new budget allows its reserve of retries, then refuses; at a ratio of
 * 10 % every ten reads earn one retry; quiet times save up no more than the reserve; a ratio outside 0 to 1 is
 * refused.
 */
class RetryBudgetTest {

    @Test
    void aNewBudgetHoldsItsReserveThenRefuses() {
        RetryBudget budget = new RetryBudget(0.1);
        for (int i = 0; i < RetryBudget.MAX_BALANCE; i++) {
            assertThat(budget.tryWithdraw()).as("retry %d of the reserve", i).isTrue();
        }
        assertThat(budget.tryWithdraw()).isFalse();
    }

    @Test
    void tenReadsAtTenPercentEarnOneRetry() {
        RetryBudget budget = new RetryBudget(0.1);
        while (budget.tryWithdraw()) {
            // spend the reserve
        }
        for (int i = 0; i < 9; i++) {
            budget.deposit();
        }
        assertThat(budget.tryWithdraw()).as("nine reads").isFalse();
        budget.deposit();
        assertThat(budget.tryWithdraw()).as("ten reads").isTrue();
        assertThat(budget.tryWithdraw()).isFalse();
    }

    @Test
    void quietTimesSaveUpOnlyToTheCap() {
        RetryBudget budget = new RetryBudget(0.1);
        for (int i = 0; i < 10_000; i++) {
            budget.deposit();
        }
        int retries = 0;
        while (budget.tryWithdraw()) {
            retries++;
        }
        assertThat(retries).isEqualTo(RetryBudget.MAX_BALANCE);
    }

    @Test
    void aRatioOutsideZeroToOneIsRefused() {
        assertThatThrownBy(() -> new RetryBudget(1.5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetryBudget(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }
}
