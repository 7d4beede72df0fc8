import UVHTTP1

extension PreparedRequest {
    /// The preparation of `request` with `fields` appended to its own, made from `base` (the
    /// preparation of `request`) by writing the fields where the request's fields end
    /// (`callerFieldsEnd`), the bytes a fresh preparation would encode: a tracer's fields differ
    /// for every task, and checking and encoding the whole head again for each cost more than
    /// the rest of the request.
    ///
    /// nil when the result could differ from a fresh preparation, which the caller then makes:
    /// a field would replace one of the request's or drop one of the session's `defaults`
    /// rather than be added, or names a field the preparation reads (`isAddable`).
    static func adding(_ fields: InjectedFields, to base: PreparedRequest, of request: Request,
                       defaults: EncodedFields) -> PreparedRequest? {
        // The first field and the others apart: iterating the fields as a sequence copies them
        // (and retains their strings) for each pass.
        guard let first = fields.first else { return base }
        guard isAddable(first.name, to: request, defaults: defaults) else { return nil }
        var added = first.name.utf8.count + first.value.utf8.count + 4
        for field in fields.others {
            guard isAddable(field.name, to: request, defaults: defaults) else { return nil }
            added += field.name.utf8.count + field.value.utf8.count + 4
        }
        let end = base.callerFieldsEnd
        let old = base.bytes
        // Written whole around the new fields into a temporary buffer (on the stack for a head
        // this size), then copied into the array at once: appends cost ~90 instructions each,
        // and init(unsafeUninitializedCapacity:) allocates through the standard library's
        // unspecialized code, which looks the storage type up at run time (~540 per request).
        let bytes = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: old.count + added) { buffer in
            var at = buffer.baseAddress!
            old.withUnsafeBufferPointer { old in
                at.initialize(from: old.baseAddress!, count: end)
                at += end
                write(first, at: &at)
                for field in fields.others { write(field, at: &at) }
                at.initialize(from: old.baseAddress! + end, count: old.count - end)
            }
            return [UInt8](UnsafeBufferPointer(buffer))
        }
        return PreparedRequest(base, bytes: bytes, callerFieldsEnd: end + added)
    }

    /// Whether `name` can be added to the preparation of `request`: a name the preparation
    /// does not read, that neither the request nor the session's `defaults` have (it would
    /// replace theirs, not be added). Names and values were checked as they were injected
    /// (InjectedFieldsInjector).
    private static func isAddable(_ name: String, to request: Request, defaults: EncodedFields) -> Bool {
        isAddable(name) && !request.headerFields.contains { RequestEncoder.sameName($0.name, name) }
            && !defaults.contains(name: name)
    }

    /// Writes `name: value\r\n` at `at` and moves it past them.
    private static func write(_ field: (name: String, value: String), at: inout UnsafeMutablePointer<UInt8>) {
        write(field.name, at: &at)
        at[0] = 0x3A
        at[1] = 0x20
        at += 2
        write(field.value, at: &at)
        at[0] = 0x0D
        at[1] = 0x0A
        at += 2
    }

    /// Copies `text`'s UTF-8 bytes to `at` and moves it past them.
    private static func write(_ text: String, at: inout UnsafeMutablePointer<UInt8>) {
        var text = text
        text.withUTF8 { bytes in
            guard let start = bytes.baseAddress else { return }
            at.initialize(from: start, count: bytes.count)
            at += bytes.count
        }
    }

    /// A field name that can go into prepared bytes as they are: none of the fields the
    /// preparation itself reads (Host, the framing fields, Expect, and the Cookie, Authorization
    /// and Proxy-Authorization it adds unless the request has them).
    static func isAddable(_ name: String) -> Bool {
        // Their lengths first: a tracer's names (traceparent, tracestate, baggage) have none of them.
        switch name.utf8.count {
        case 4, 6, 13, 14, 17, 19: return !fieldsPreparationReads.contains { RequestEncoder.sameName($0, name) }
        default: return true
        }
    }

    private static let fieldsPreparationReads = [
        "Host", "Content-Length", "Transfer-Encoding", "Expect", "Cookie", "Authorization", "Proxy-Authorization",
    ]
}
