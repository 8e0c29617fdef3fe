package travelrule

// A beneficiary VASP's decision, read in one place: the type, the words of
// a status that decide (statusDecision), and the decision a resolution
// sends (decisionOf).

// Decision is a beneficiary VASP's decision on a transfer: [Approved] or
// [Rejected]. The zero value, "", is no decision. Read a callback's with
// [Callback.Decision]; send one with [Approve] or [Reject].
type Decision string

// The decisions.
const (
	// Approved: the beneficiary's VASP accepts the transfer.
	Approved Decision = "approved"
	// Rejected: the beneficiary's VASP refuses the transfer.
	Rejected Decision = "rejected"
)

// statusDecision is the decision a status says: Approved for "approved",
// "completed", "confirmed" or "accepted", Rejected for "rejected",
// "declined", "canceled", "cancelled" or "failed" (in any case), and ""
// for any other.
func statusDecision(status string) Decision {
	switch {
	case oneOfFold(status, "approved", "completed", "confirmed", "accepted"):
		return Approved
	case oneOfFold(status, "rejected", "declined", "canceled", "cancelled", "failed"):
		return Rejected
	}
	return ""
}

// decisionOf is the decision of a resolution's Approved: Approved for
// "true", Rejected for "false", and "" for any other value, which
// [InquiryResolution.Validate] refuses.
func decisionOf(approved string) Decision {
	switch approved {
	case wireApproved:
		return Approved
	case wireRejected:
		return Rejected
	}
	return ""
}
