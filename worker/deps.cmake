# lt_worker's links: the wire, the compiler (lanes, the output contract), xxHash (checksums and digests).
target_link_libraries(lt_worker PUBLIC lt_proto lt_compiler PRIVATE PkgConfig::XXHASH)
