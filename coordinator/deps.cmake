# lt_coordinator's links: the database, the wire, the compiler (knob spaces, model recognition), xxHash (digests).
target_link_libraries(lt_coordinator PUBLIC lt_db lt_proto lt_compiler PRIVATE PkgConfig::XXHASH)
