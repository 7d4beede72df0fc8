import Synchronization
import UVFetchCore

/// The validators that came with claimed URLs (`QueueExchange.Claim.validators`), kept from
/// the claim until the run starts the URL and asks for them once (`ValidatorLookup`). Keyed by
/// the input's bytes, as the claim and the run's entry both have them; a URL claimed twice
/// (this worker took over its own expired lease) has one entry a claim, handed out in order.
final class ClaimedValidators: ValidatorLookup {
    private let table = Mutex<[[UInt8]: [RecordedValidators.Validators]]>([:])

    /// Keeps `validators` for the URL whose input bytes are `url` (the claiming thread).
    func add(_ validators: RecordedValidators.Validators, for url: [UInt8]) {
        table.withLock { $0[url, default: []].append(validators) }
    }

    /// Takes the validators of an entry starting (the completion queue), if its claim had any.
    func validators(text: String, bytes: [UInt8]?) -> RecordedValidators.Validators? {
        let key = bytes ?? Array(text.utf8)
        return table.withLock { table in
            guard var list = table[key], !list.isEmpty else { return nil }
            let first = list.removeFirst()
            table[key] = list.isEmpty ? nil : list
            return first
        }
    }
}
