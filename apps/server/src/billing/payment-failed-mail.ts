import { type AuthServices, createMailer } from "@gw/auth";
import type { BillingNotifier } from "@gw/billing";
import type { ServiceBase } from "../services";

const usd = (dollars: number): string => `${dollars.toFixed(2)} USD`;

/**
 * Billing events e-mailed to the account's address (invoice.payment_failed, low balance, auto top-up failures),
 * through the same mailer (SMTP or outbox) as accounts; each mail links to the billing page.
 */
export function paymentFailedMailer(deps: ServiceBase & { users: AuthServices["users"] }): BillingNotifier {
  const mailer = createMailer({ smtpUrl: deps.config.smtpUrl, from: deps.config.mailFrom, dataDir: deps.config.dataDir }, deps.clock, deps.logger);
  const send = async (userId: string, subject: string, intro: string, outro: string): Promise<void> => {
    const user = await deps.users.findById(userId);
    if (!user?.email) return;
    const link = `${deps.config.publicUrl}/dashboard/billing`;
    await mailer.send({
      to: user.email,
      subject,
      text: `${intro}\n\n${outro}\n\n${link}\n`,
      html: `<p>${intro}</p><p>${outro}</p><p><a href="${link}">${link}</a></p>`,
    });
  };
  return {
    async paymentFailed(userId, details) {
      const amount = `${details.amountDue.toFixed(2)} ${details.currency.toUpperCase()}`;
      await send(userId, "Your subscription payment failed",
        `We could not collect the payment of ${amount} for your ${details.planName} subscription.`,
        "Your plan stays active while the payment is retried. Please update your payment method from the billing page.");
    },
    async lowBalance(userId, details) {
      await send(userId, "Your credit balance is low",
        `Your credit balance is ${usd(details.balance)}, below the ${usd(details.threshold)} you asked to be told about.`,
        "Add credits or turn on auto top-up from the billing page so that your requests keep running.");
    },
    async autoTopupFailed(userId, details) {
      const outro = details.disabled
        ? "Auto top-up failed three times in a row and is now turned off. Save a working card and turn it on again from the billing page."
        : "It will be tried again with your next request while the balance stays below the threshold.";
      // the reason is ours (a declined card's message, or a state), never the processor's raw answer
      await send(userId, details.disabled ? "Auto top-up failed and is turned off" : "Auto top-up failed",
        `We could not charge ${usd(details.amount)} to your saved card: ${details.reason.replace(/[<>&"]/g, "")}.`, outro);
    },
  };
}
