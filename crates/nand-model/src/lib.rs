#![cfg_attr(not(feature = "std"), no_std)]
