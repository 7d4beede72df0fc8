/// Where a run finds the validators to send with a URL (`FetchRunner.Settings.since`): an
/// earlier run's --jsonl file (`RecordedValidators`), or the fleet's queue, which keeps them per
/// URL. Asked on the completion queue, once per URL as it starts: it must not block.
public protocol ValidatorLookup: Sendable {
    /// The validators for an input entry (`URLInput.Entry.url`'s `text` and `bytes`), if its
    /// last response had any.
    func validators(text: String, bytes: [UInt8]?) -> RecordedValidators.Validators?
}
