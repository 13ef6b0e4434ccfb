import type { BillingNotifier } from "@gw/billing";
import { createMailer } from "@gw/auth/mail/mailer";
import type { AppContext } from "../context";

/** invoice.payment_failed → an e-mail to the account's address, through the same mailer (SMTP or outbox) as accounts. */
export function paymentFailedMailer(ctx: AppContext): BillingNotifier {
  const mailer = createMailer({ smtpUrl: ctx.config.smtpUrl, from: ctx.config.mailFrom, dataDir: ctx.config.dataDir }, ctx.clock, ctx.logger);
  return {
    async paymentFailed(userId, details) {
      const user = await ctx.auth.users.findById(userId);
      if (!user?.email) return;
      const amount = `${details.amountDue.toFixed(2)} ${details.currency.toUpperCase()}`;
      const intro = `We could not collect the payment of ${amount} for your ${details.planName} subscription.`;
      const outro = "Your plan stays active while the payment is retried. Please update your payment method from the billing page.";
      const link = `${ctx.config.publicUrl}/dashboard/billing`;
      await mailer.send({
        to: user.email,
        subject: "Your subscription payment failed",
        text: `${intro}\n\n${outro}\n\n${link}\n`,
        html: `<p>${intro}</p><p>${outro}</p><p><a href="${link}">${link}</a></p>`,
      });
    },
  };
}
